//! The engine without the Python layer, for diffing two revisions (scripts/compare_outputs.py).
//!
//!     run_json < scenario.json      # the result JSON `tcpf run --json` prints
//!     run_json algorithms           # the registry `tcpf algorithms --json` reads
//!
//! Exit 2 with the error on stderr when the scenario is invalid or the run fails.
use std::io::Read;

#[global_allocator]
static ALLOC: tcpf_core::alloc::HugePageAlloc = tcpf_core::alloc::HugePageAlloc;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("algorithms") {
        println!("{}", tcpf_core::api::algorithms());
        return;
    }
    let mut scenario = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut scenario) {
        eprintln!("run_json: cannot read the scenario from stdin: {e}");
        std::process::exit(2);
    }
    match tcpf_core::api::run(&scenario, None, None) {
        Ok(out) => println!("{out}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
