//! Fuzzing the formula language (issue 17): random strings and random well-formed expression
//! trees through the parser, constant folder, compiler and evaluator.
//!
//! Cases per property: `TCPF_FUZZ_CASES` (default 10 000, a few seconds in a release build), e.g.
//! `TCPF_FUZZ_CASES=1000000 cargo test --release -p tcpf-core --test fuzz_formula` (see
//! docs/testing.md).

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use tcpf_core::cc::formula::{Program, MAX_LEN, VARIABLES};

fn config(default: u32) -> Config {
    let cases = std::env::var("TCPF_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    Config { cases, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), ..Config::default() }
}

fn consts() -> Vec<(String, f64)> {
    vec![("a".into(), 0.31), ("b".into(), 2.5)]
}

/// Fragments a formula is made of, some of them wrong, so random concatenations reach deep
/// into the parser.
const PIECES: &[&str] = &[
    "w", "x", "w_max", "w0", "t", "rtt", "min_rtt", "ssthresh", "a", "b", "c", "log(", "ln(", "exp(", "sqrt(", "abs(", "min(", "max(",
    "pow(", "sin(", "log", "(", ")", ",", "+", "-", "*", "/", "^", " ", "1", "0", "2.5", ".5", "1e3", "1e-3", "1e", "1e+", "1e400", "..",
    "3.", "e", "_", "$", "é", "\t", "((", "))", "--", "^-", "**",
];

fn piece_string() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|v| v.concat())
}

fn vars_strategy() -> impl Strategy<Value = Vec<f64>> {
    let v = prop_oneof![
        4 => -1e3f64..1e3,
        1 => Just(0.0),
        1 => Just(-0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(1e308),
        1 => Just(5e-324),
    ];
    prop::collection::vec(v, VARIABLES.len())
}

/// Compiling `text` must not panic; an error names a column within the formula (or one past its
/// end) and says something; a compiled program evaluates without panicking.
fn check_text(text: &str, vars: &[f64]) -> Result<(), TestCaseError> {
    match Program::compile(text, VARIABLES, &consts()) {
        Ok(p) => {
            let _ = p.eval(vars);
            prop_assert_eq!(p.text(), text);
        }
        Err(e) => {
            prop_assert!(!e.message.is_empty());
            let len = text.chars().count();
            prop_assert!(e.column >= 1 && e.column <= len.min(MAX_LEN) + 1, "column {} of {} characters: {}", e.column, len, e);
        }
    }
    Ok(())
}

// ----- a reference tree, printed two ways and evaluated directly ----------------------------

#[derive(Clone, Debug)]
enum E {
    Num(f64),
    Var(usize),
    Const(usize),
    Neg(Box<E>),
    Bin(char, Box<E>, Box<E>),
    Call(&'static str, Vec<E>),
}

fn tree() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        (0u32..5000, 0u32..4).prop_map(|(m, s)| E::Num(m as f64 / [1.0, 10.0, 1000.0, 1e-5][s as usize])),
        (0..VARIABLES.len()).prop_map(E::Var),
        (0usize..2).prop_map(E::Const),
    ];
    leaf.prop_recursive(6, 48, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|a| E::Neg(Box::new(a))),
            (prop::sample::select(vec!['+', '-', '*', '/', '^']), inner.clone(), inner.clone()).prop_map(|(op, a, b)| E::Bin(op, Box::new(a), Box::new(b))),
            (prop::sample::select(vec!["log", "ln", "exp", "sqrt", "abs"]), inner.clone()).prop_map(|(f, a)| E::Call(f, vec![a])),
            (prop::sample::select(vec!["min", "max", "pow"]), inner.clone(), inner).prop_map(|(f, a, b)| E::Call(f, vec![a, b])),
        ]
    })
}

/// What the language defines: the same functions the engine documents (libm's `log`, `exp` and
/// `pow`, IEEE `sqrt`, `abs`, `min`, `max`), operators evaluated left to right.
fn reference(e: &E, vars: &[f64]) -> f64 {
    match e {
        E::Num(v) => *v,
        E::Var(i) => vars[*i],
        E::Const(i) => consts()[*i].1,
        E::Neg(a) => -reference(a, vars),
        E::Bin(op, a, b) => {
            let (x, y) = (reference(a, vars), reference(b, vars));
            match op {
                '+' => x + y,
                '-' => x - y,
                '*' => x * y,
                '/' => x / y,
                _ => libm::pow(x, y),
            }
        }
        E::Call(f, args) => {
            let x = reference(&args[0], vars);
            let y = args.get(1).map(|b| reference(b, vars)).unwrap_or(0.0);
            match *f {
                "log" | "ln" => libm::log(x),
                "exp" => libm::exp(x),
                "sqrt" => x.sqrt(),
                "abs" => x.abs(),
                "min" => x.min(y),
                "max" => x.max(y),
                _ => libm::pow(x, y),
            }
        }
    }
}

fn leaf_text(e: &E) -> Option<String> {
    match e {
        E::Num(v) => Some(format!("{v:?}")),
        E::Var(i) => Some(if *i == 0 { "x".to_string() } else { VARIABLES[*i].to_string() }),
        E::Const(i) => Some(consts()[*i].0.clone()),
        _ => None,
    }
}

/// Every operation in parentheses.
fn full(e: &E) -> String {
    if let Some(s) = leaf_text(e) {
        return s;
    }
    match e {
        E::Neg(a) => format!("(-{})", full(a)),
        E::Bin(op, a, b) => format!("({} {op} {})", full(a), full(b)),
        E::Call(f, args) => format!("{f}({})", args.iter().map(full).collect::<Vec<_>>().join(", ")),
        _ => unreachable!(),
    }
}

/// Precedence of what `minimal` prints for `e`: 1 sums, 2 products, 3 unary minus, 4 powers, 5 atoms.
fn prec(e: &E) -> u8 {
    match e {
        E::Bin('+' | '-', ..) => 1,
        E::Bin('*' | '/', ..) => 2,
        E::Neg(_) => 3,
        E::Bin(..) => 4,
        E::Num(v) if *v < 0.0 => 3,
        _ => 5,
    }
}

/// As few parentheses as the grammar needs: `+ -` and `* /` left-associative, `^`
/// right-associative with an atom as its base and a unary expression as its exponent (`2^-1`),
/// unary minus binding looser than `^` (`-w^2 = -(w^2)`).
fn minimal(e: &E) -> String {
    let wrap = |x: &E, need: bool| if need { format!("({})", minimal(x)) } else { minimal(x) };
    if let Some(s) = leaf_text(e) {
        return s;
    }
    match e {
        E::Neg(a) => format!("-{}", wrap(a, prec(a) < 3)),
        E::Bin('^', a, b) => format!("{}^{}", wrap(a, prec(a) < 5), wrap(b, prec(b) < 3)),
        E::Bin(op, a, b) => {
            let p = prec(e);
            format!("{} {op} {}", wrap(a, prec(a) < p), wrap(b, prec(b) <= p))
        }
        E::Call(f, args) => format!("{f}({})", args.iter().map(minimal).collect::<Vec<_>>().join(",")),
        _ => unreachable!(),
    }
}

/// Whether `e` has a sub-tree without variables whose value is not a finite number
/// (`log(0)`, `1/0`): the parser refuses such a constant part at load. Each printing keeps the
/// sub-trees as sub-expressions (left-deep chains fold only their constant prefix, which is a
/// sub-tree), so both printings are refused alike.
fn has_non_finite_constant_part(e: &E) -> bool {
    fn constant(e: &E, bad: &mut bool) -> bool {
        let c = match e {
            E::Num(_) | E::Const(_) => true,
            E::Var(_) => false,
            E::Neg(a) => constant(a, bad),
            E::Bin(_, a, b) => constant(a, bad) & constant(b, bad),
            E::Call(_, args) => args.iter().fold(true, |c, a| constant(a, bad) & c),
        };
        if c && !reference(e, &[]).is_finite() {
            *bad = true;
        }
        c
    }
    let mut bad = false;
    constant(e, &mut bad);
    bad
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(config(10_000))]

    /// Arbitrary text: never a panic, errors say where.
    #[test]
    fn any_text_compiles_or_fails_cleanly(text in ".{0,60}", vars in vars_strategy()) {
        check_text(&text, &vars)?;
    }

    /// Concatenated formula fragments (mostly malformed, some valid): never a panic.
    #[test]
    fn fragment_soup_compiles_or_fails_cleanly(text in piece_string(), vars in vars_strategy()) {
        check_text(&text, &vars)?;
    }

    /// Long and deeply nested inputs up to and past the limits: an error or a program, quickly,
    /// whatever the repetition.
    #[test]
    fn repetitions_hit_the_limits_cleanly(unit in prop::sample::select(vec!["w+", "w*", "(", "-", "w^", "log(", "max(w,", "1/(", "+", "(w)"]), n in 0usize..12_000, close in any::<bool>()) {
        let mut text = unit.repeat(n) + "w";
        if close {
            text += &")".repeat(unit.matches('(').count() * n);
        }
        check_text(&text, &[1.5; 7])?;
    }

    /// A printed tree parses back to the same function: fully parenthesised and with as few
    /// parentheses as the grammar needs, bit for bit (constant folding included); or, exactly
    /// when the tree has a constant part that is not a finite number, is refused naming it.
    #[test]
    fn printed_trees_evaluate_like_the_tree(e in tree(), vars in vars_strategy()) {
        let want = reference(&e, &vars);
        let refused = has_non_finite_constant_part(&e);
        for text in [full(&e), minimal(&e)] {
            match Program::compile(&text, VARIABLES, &consts()) {
                Err(err) if refused => prop_assert!(err.message.starts_with("constant part '"), "{}: {}", text, err),
                Err(err) => return Err(TestCaseError::fail(format!("{text}: {err}"))),
                Ok(p) => {
                    prop_assert!(!refused, "{} has a constant part that is not finite, yet compiled", text);
                    let got = p.eval(&vars);
                    prop_assert!(same(got, want), "{} = {} at {:?}, the tree gives {}", text, got, vars, want);
                }
            }
        }
    }
}
