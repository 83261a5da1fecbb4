//! Run a scenario given as JSON on stdin and print the result JSON: `cargo run --release
//! --example run < scenario.json`. Handy for profiling the engine without Python.
use std::io::Read;

#[global_allocator]
static ALLOC: tcpf_core::alloc::HugePageAlloc = tcpf_core::alloc::HugePageAlloc;

fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).expect("read stdin");
    let t0 = std::time::Instant::now();
    match tcpf_core::api::run(&s, None, None) {
        Ok(out) => {
            eprintln!("wall {:.3} s", t0.elapsed().as_secs_f64());
            println!("{out}");
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
