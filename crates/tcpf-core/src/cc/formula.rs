//! Formula-defined controllers and the small expression language they use.
//!
//! `algorithm = "formula"` with either
//! - `increase` (packets added per RTT, applied per ACK as `increase/W`) and `decrease`
//!   (packets removed per loss event), or
//! - sastry2005's CYRF form `f` and `g`: per RTT `W ← W + W/f(W)`, per loss event
//!   `W ← W − W·g(W)`,
//!
//! plus any named numeric constants, e.g.
//! `params = { increase = "a*log(w)/w", decrease = "b*log(w)", a = 1, b = 0.5 }`.
//!
//! Variables: `w` (current window; `x` is the same), `w_max` and `w0` (the window just before and
//! just after the last decrease), `t` (RTTs since the last decrease, counted as Σ 1/W over
//! ACKs), `rtt` (latest RTT sample, s), `min_rtt` (smallest RTT sample, s), `ssthresh`
//! (packets). Operators `+ - * / ^` (power, right-associative, binds tighter than unary minus:
//! `-w^2 = -(w^2)`), parentheses, functions `log` = `ln` (natural), `exp`, `sqrt`, `abs`,
//! `min`, `max`, `pow`.
//!
//! A formula is parsed by a recursive-descent parser into a tree, constant sub-trees are folded
//! as they are parsed, and the tree is compiled once into flat stack code evaluated without
//! allocation. No `eval`, no Python. Bad formulas fail at load with the column of the error,
//! among them a constant part that is not a finite number (`1/0`, `log(0)`, `sqrt(-1)`,
//! `1e308*10`), which would stop the run at its first use; a NaN or infinite value at run time
//! (`1/(w - 20)` at w = 20) stops the run (through `Controller::error`) instead of panicking.
//!
//! Limits, so that no formula can exhaust the stack: at most `MAX_LEN` (10 000) characters,
//! `MAX_NEST` (200) levels of nesting (each parenthesis or function call, unary sign and `^`
//! exponent opens one; sums and products are flat chains, however long), and `MAX_DEPTH` (64)
//! values on the evaluation stack.
//!
//! Slow start, the halving at the loss that ends it, and timeouts are those of every other
//! family here. Until the first decrease, `w_max` and `w0` are the window when congestion
//! avoidance started. A decrease never leaves less than 2 packets, and an increase that would
//! take the window below 1 packet stops at 1.

use super::params::{AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params};
use super::{Ack, Controller, LossEvent, Timeout, Window};
use std::fmt;

// ----- the expression language -------------------------------------------------------------

/// A formula that failed to parse or compile: what is wrong and where (1-based column).
#[derive(Clone, Debug, PartialEq)]
pub struct FormulaError {
    pub column: usize,
    pub message: String,
}

impl fmt::Display for FormulaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.message, self.column)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Func {
    Log,
    Exp,
    Sqrt,
    Abs,
    Min,
    Max,
    Pow,
}

const FUNCS: &[(&str, Func, usize)] = &[
    ("log", Func::Log, 1),
    ("ln", Func::Log, 1),
    ("exp", Func::Exp, 1),
    ("sqrt", Func::Sqrt, 1),
    ("abs", Func::Abs, 1),
    ("min", Func::Min, 2),
    ("max", Func::Max, 2),
    ("pow", Func::Pow, 2),
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// The parsed expression tree.
///
/// Sums and products are flat chains (`first op1 t1 op2 t2 …`, evaluated left to right), not
/// left-deep binary trees, so the tree's depth is bounded by the nesting the parser counts
/// (`MAX_NEST`) however long the formula: folding, compiling and dropping it recurse only that
/// deep.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Num(f64),
    Var(u8),
    Neg(Box<Node>),
    /// Only `BinOp::Pow` (right-associative); `+ - * /` are `Chain`s.
    Bin(BinOp, Box<Node>, Box<Node>),
    /// `first op1 t1 op2 t2 …` = `((first op1 t1) op2 t2) …`, ops all `+ -` or all `* /`.
    Chain(Box<Node>, Vec<(BinOp, Node)>),
    Call(Func, Vec<Node>),
}

#[inline]
fn apply_bin(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Pow => libm::pow(a, b),
    }
}

#[inline]
fn apply_func(f: Func, a: f64, b: f64) -> f64 {
    match f {
        Func::Log => libm::log(a),
        Func::Exp => libm::exp(a),
        Func::Sqrt => a.sqrt(),
        Func::Abs => a.abs(),
        Func::Min => a.min(b),
        Func::Max => a.max(b),
        Func::Pow => libm::pow(a, b),
    }
}

struct Parser<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    vars: &'a [&'a str],
    consts: &'a [(String, f64)],
    used_consts: Vec<bool>,
    /// Current nesting level (bounded so a hostile formula cannot exhaust the stack).
    nest: usize,
    /// Fold constant sub-trees while parsing (always, but for a test that compares the
    /// unfolded tree's old folding).
    fold: bool,
}

/// Longest formula, in characters.
pub const MAX_LEN: usize = 10_000;

/// Deepest nesting: each parenthesis or function call, unary sign and power exponent opens a
/// level around what follows it.
pub const MAX_NEST: usize = 200;

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Parser<'a> {
    fn column(&self, pos: usize) -> usize {
        self.src[..pos.min(self.src.len())].chars().count() + 1
    }

    fn fail<T>(&self, pos: usize, message: impl Into<String>) -> Result<T, FormulaError> {
        Err(FormulaError { column: self.column(pos), message: message.into() })
    }

    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// The token at the current position, for messages.
    fn describe_here(&mut self) -> String {
        self.skip_ws();
        match self.src[self.pos..].chars().next() {
            None => "end of formula".to_string(),
            Some(c) => format!("'{c}'"),
        }
    }

    fn unexpected<T>(&mut self) -> Result<T, FormulaError> {
        let what = self.describe_here();
        self.fail(self.pos, format!("unexpected {what}"))
    }

    /// `v`, the value of the constant sub-expression `src[start..pos]` just parsed, as a
    /// folded constant; refused unless it is a finite number, as the run would stop at the
    /// formula's first use (or, inside `min`/`max`, run on an infinity the author did not mean).
    fn constant(&self, v: f64, start: usize) -> Result<Node, FormulaError> {
        if v.is_finite() {
            return Ok(Node::Num(v));
        }
        let text = self.src[start..self.pos].trim_end();
        let shown = match text.char_indices().nth(40) {
            Some((cut, _)) => format!("{}...", &text[..cut]),
            None => text.to_string(),
        };
        self.fail(start, format!("constant part '{shown}' must be a finite number; it evaluates to {v}"))
    }

    /// The chain `first op t op t …` (ops from `op_at`, terms from `next`) that starts at
    /// `start`. Its constant prefix is folded (`1 + 2 + w` → `3 + w`, but `w + 1 + 2` stays), as
    /// the left-deep tree `(w + 1) + 2` it stands for would be.
    fn chain_from(
        &mut self,
        start: usize,
        op_at: fn(u8) -> Option<BinOp>,
        next: fn(&mut Self) -> Result<Node, FormulaError>,
    ) -> Result<Node, FormulaError> {
        let mut acc = next(self)?;
        let mut rest = Vec::new();
        while let Some(op) = self.peek().and_then(op_at) {
            self.pos += 1;
            let t = next(self)?;
            match (&acc, &t) {
                (Node::Num(x), Node::Num(y)) if self.fold && rest.is_empty() => acc = self.constant(apply_bin(op, *x, *y), start)?,
                _ => rest.push((op, t)),
            }
        }
        Ok(chain(acc, rest))
    }

    fn expr(&mut self) -> Result<Node, FormulaError> {
        self.skip_ws();
        let sum = |c| match c {
            b'+' => Some(BinOp::Add),
            b'-' => Some(BinOp::Sub),
            _ => None,
        };
        self.chain_from(self.pos, sum, Self::term)
    }

    fn term(&mut self) -> Result<Node, FormulaError> {
        self.skip_ws();
        let product = |c| match c {
            b'*' => Some(BinOp::Mul),
            b'/' => Some(BinOp::Div),
            _ => None,
        };
        self.chain_from(self.pos, product, Self::unary)
    }

    /// Parse what follows the token just consumed (at `at`) one nesting level deeper.
    fn nested(&mut self, at: usize, inner: fn(&mut Self) -> Result<Node, FormulaError>) -> Result<Node, FormulaError> {
        if self.nest >= MAX_NEST {
            return self.fail(at, format!("formula is nested too deeply (max {MAX_NEST} levels)"));
        }
        self.nest += 1;
        let r = inner(self);
        self.nest -= 1;
        r
    }

    fn unary(&mut self) -> Result<Node, FormulaError> {
        match self.peek() {
            Some(b'-') => {
                let at = self.pos;
                self.pos += 1;
                Ok(match self.nested(at, Self::unary)? {
                    Node::Num(v) if self.fold => Node::Num(-v),
                    a => Node::Neg(Box::new(a)),
                })
            }
            Some(b'+') => {
                let at = self.pos;
                self.pos += 1;
                self.nested(at, Self::unary)
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<Node, FormulaError> {
        self.skip_ws();
        let start = self.pos;
        let base = self.atom()?;
        if self.peek() == Some(b'^') {
            let at = self.pos;
            self.pos += 1;
            let exp = self.nested(at, Self::unary)?; // right-associative; allows 2^-1
            return match (base, exp) {
                (Node::Num(x), Node::Num(y)) if self.fold => self.constant(apply_bin(BinOp::Pow, x, y), start),
                (base, exp) => Ok(Node::Bin(BinOp::Pow, Box::new(base), Box::new(exp))),
            };
        }
        Ok(base)
    }

    fn number(&mut self) -> Result<Node, FormulaError> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = self.pos;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            let mut j = i + 1;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_digit() {
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                i = j;
            }
        }
        let text = &self.src[start..i];
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => {
                self.pos = i;
                Ok(Node::Num(v))
            }
            _ => self.fail(start, format!("bad number '{text}'")),
        }
    }

    fn atom(&mut self) -> Result<Node, FormulaError> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(b'(') => {
                let at = self.pos;
                self.pos += 1;
                let e = self.nested(at, Self::expr)?;
                if self.peek() != Some(b')') {
                    let what = self.describe_here();
                    return self.fail(self.pos, format!("expected ')' but found {what}"));
                }
                self.pos += 1;
                Ok(e)
            }
            Some(c) if is_ident_start(c) => {
                let start = self.pos;
                while self.pos < self.bytes.len() && is_ident(self.bytes[self.pos]) {
                    self.pos += 1;
                }
                let name = &self.src[start..self.pos];
                if self.peek() == Some(b'(') {
                    return self.call(name, start);
                }
                if let Some(i) = self.vars.iter().position(|v| *v == name) {
                    return Ok(Node::Var(i as u8));
                }
                if name == "x" {
                    if let Some(i) = self.vars.iter().position(|v| *v == "w") {
                        return Ok(Node::Var(i as u8));
                    }
                }
                if let Some(i) = self.consts.iter().position(|(n, _)| n == name) {
                    self.used_consts[i] = true;
                    return Ok(Node::Num(self.consts[i].1));
                }
                if FUNCS.iter().any(|(n, _, _)| *n == name) {
                    return self.fail(start, format!("function '{name}' needs arguments in parentheses"));
                }
                let mut known: Vec<&str> = self.vars.to_vec();
                known.extend(self.consts.iter().map(|(n, _)| n.as_str()));
                self.fail(start, format!("unknown name '{name}' (known: {})", known.join(", ")))
            }
            _ => self.unexpected(),
        }
    }

    fn call(&mut self, name: &str, start: usize) -> Result<Node, FormulaError> {
        let Some(&(_, func, arity)) = FUNCS.iter().find(|(n, _, _)| *n == name) else {
            let names: Vec<&str> = FUNCS.iter().map(|(n, _, _)| *n).collect();
            return self.fail(start, format!("unknown function '{name}' (functions: {})", names.join(", ")));
        };
        if self.nest >= MAX_NEST {
            return self.fail(start, format!("formula is nested too deeply (max {MAX_NEST} levels)"));
        }
        self.nest += 1;
        let r = self.call_args(name, func, arity, start);
        self.nest -= 1;
        r
    }

    fn call_args(&mut self, name: &str, func: Func, arity: usize, start: usize) -> Result<Node, FormulaError> {
        self.pos += 1; // '('
        let mut args = Vec::new();
        if self.peek() == Some(b')') {
            self.pos += 1;
        } else {
            loop {
                args.push(self.expr()?);
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => {
                        let what = self.describe_here();
                        return self.fail(self.pos, format!("expected ',' or ')' but found {what}"));
                    }
                }
            }
        }
        if args.len() != arity {
            let s = if arity == 1 { "" } else { "s" };
            return self.fail(start, format!("{name} takes {arity} argument{s}, got {}", args.len()));
        }
        if self.fold && args.iter().all(|a| matches!(a, Node::Num(_))) {
            let v: Vec<f64> = args.iter().map(|a| if let Node::Num(v) = a { *v } else { 0.0 }).collect();
            return self.constant(apply_func(func, v[0], v.get(1).copied().unwrap_or(0.0)), start);
        }
        Ok(Node::Call(func, args))
    }
}

/// `first` alone, or the chain `first rest…`.
fn chain(first: Node, rest: Vec<(BinOp, Node)>) -> Node {
    if rest.is_empty() {
        first
    } else {
        Node::Chain(Box::new(first), rest)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Instr {
    Const(f64),
    Var(u8),
    Neg,
    Bin(BinOp),
    F1(Func),
    F2(Func),
}

/// Deepest evaluation stack a formula may need.
const MAX_DEPTH: usize = 64;

/// A compiled formula: flat stack code over a fixed set of variables.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    code: Vec<Instr>,
    text: String,
    /// Which variables the formula reads.
    uses: u32,
}

fn emit(n: &Node, code: &mut Vec<Instr>, depth: usize, max: &mut usize, uses: &mut u32) {
    *max = (*max).max(depth + 1);
    match n {
        Node::Num(v) => code.push(Instr::Const(*v)),
        Node::Var(i) => {
            *uses |= 1 << i;
            code.push(Instr::Var(*i));
        }
        Node::Neg(a) => {
            emit(a, code, depth, max, uses);
            code.push(Instr::Neg);
        }
        Node::Bin(op, a, b) => {
            emit(a, code, depth, max, uses);
            emit(b, code, depth + 1, max, uses);
            code.push(Instr::Bin(*op));
        }
        Node::Chain(first, rest) => {
            emit(first, code, depth, max, uses);
            for (op, t) in rest {
                emit(t, code, depth + 1, max, uses);
                code.push(Instr::Bin(*op));
            }
        }
        Node::Call(f, args) => {
            for (i, a) in args.iter().enumerate() {
                emit(a, code, depth + i, max, uses);
            }
            code.push(if args.len() == 1 { Instr::F1(*f) } else { Instr::F2(*f) });
        }
    }
}

impl Program {
    /// Parse and compile `text` over the variables `vars` (by position; `x` is accepted for
    /// `w` when `w` is one of them) and the named constants `consts`.
    pub fn compile(text: &str, vars: &[&str], consts: &[(String, f64)]) -> Result<Program, FormulaError> {
        Self::compile_checked(text, vars, consts).map(|(p, _)| p)
    }

    /// As `compile`, also saying which of `consts` the formula used.
    pub fn compile_checked(text: &str, vars: &[&str], consts: &[(String, f64)]) -> Result<(Program, Vec<bool>), FormulaError> {
        assert!(vars.len() <= 32, "at most 32 variables");
        let len = text.chars().count();
        if len > MAX_LEN {
            return Err(FormulaError { column: MAX_LEN + 1, message: format!("formula too long ({len} characters, max {MAX_LEN})") });
        }
        let mut p = Parser { src: text, bytes: text.as_bytes(), pos: 0, vars, consts, used_consts: vec![false; consts.len()], nest: 0, fold: true };
        if p.peek().is_none() {
            return p.fail(p.pos, "empty formula");
        }
        let tree = p.expr()?;
        if p.peek().is_some() {
            return p.unexpected();
        }
        let mut code = Vec::new();
        let mut depth = 0;
        let mut uses = 0;
        emit(&tree, &mut code, 0, &mut depth, &mut uses);
        if depth > MAX_DEPTH {
            return Err(FormulaError { column: 1, message: format!("formula is nested too deeply (needs {depth} stack slots, at most {MAX_DEPTH})") });
        }
        Ok((Program { code, text: text.to_string(), uses }, p.used_consts))
    }

    /// The formula as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the formula reads variable number `i`.
    pub fn uses(&self, i: usize) -> bool {
        self.uses & (1 << i) != 0
    }

    /// Whether the formula is a constant (no variables).
    pub fn is_constant(&self) -> bool {
        self.uses == 0
    }

    /// Evaluate with the variables' values, in the order given to `compile`.
    #[inline]
    pub fn eval(&self, vars: &[f64]) -> f64 {
        let mut st = [0.0f64; MAX_DEPTH];
        let mut sp = 0usize;
        for ins in &self.code {
            match *ins {
                Instr::Const(v) => {
                    st[sp] = v;
                    sp += 1;
                }
                Instr::Var(i) => {
                    st[sp] = vars[i as usize];
                    sp += 1;
                }
                Instr::Neg => st[sp - 1] = -st[sp - 1],
                Instr::Bin(op) => {
                    sp -= 1;
                    st[sp - 1] = apply_bin(op, st[sp - 1], st[sp]);
                }
                Instr::F1(f) => st[sp - 1] = apply_func(f, st[sp - 1], 0.0),
                Instr::F2(f) => {
                    sp -= 1;
                    st[sp - 1] = apply_func(f, st[sp - 1], st[sp]);
                }
            }
        }
        st[0]
    }
}

// ----- the controller --------------------------------------------------------------------------

/// The variables a controller formula may read, in slot order.
pub const VARIABLES: &[&str] = &["w", "w_max", "w0", "t", "rtt", "min_rtt", "ssthresh"];
const W: usize = 0;
const W_MAX: usize = 1;
const W0: usize = 2;
const T: usize = 3;
const RTT: usize = 4;
const MIN_RTT: usize = 5;
const SSTHRESH: usize = 6;

const fn formula(name: &'static str, doc: &'static str, unit: &'static str) -> ParamSpec {
    ParamSpec { name, kind: ParamKind::Formula, doc, unit, ..ParamSpec::NUMBER }
}

pub fn formula_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "formula",
        family: "formula",
        summary: "User-defined laws: increase (packets per RTT) and decrease (packets per loss event), or CYRF f and g",
        source: "sastry2005 (CYRF: +W/f(W) per RTT, -W*g(W) per loss event)",
        params: vec![
            formula("increase", "packets added per RTT (applied per ACK as increase/W), e.g. \"log(w)/w\"", "packets/RTT"),
            formula("decrease", "packets removed per loss event, e.g. \"0.5*log(w)\"", "packets"),
            formula("f", "CYRF f: per RTT W <- W + W/f(W), e.g. \"w^2/log(w)\"", ""),
            formula("g", "CYRF g: per loss event W <- W - W*g(W), e.g. \"0.5*log(w)/w\"", ""),
        ],
        aliases: vec![],
        taxonomy: None,
        notes: "Give increase and decrease, or f and g. Variables: w (or x), w_max, w0, t (RTTs since the last decrease), rtt, min_rtt (s), ssthresh. Functions: log = ln, exp, sqrt, abs, min, max, pow; operators + - * / ^. Any other numeric key is a named constant usable in the formulas. A formula has at most 10000 characters and 200 levels of nesting. A NaN or infinite value stops the run.",
        named_numbers: true,
        check: Some(check_formula),
    }
}

fn check_formula(p: &mut Params) -> Result<(), ParamError> {
    for (name, _) in &p.named {
        if VARIABLES.contains(&name.as_str()) || name == "x" || FUNCS.iter().any(|(n, _, _)| n == name) {
            return Err(ParamError::new(name, format!("'{name}' is a variable or function name; choose another name for the constant")));
        }
    }
    let has = |n: &str| p.text(n).map(|t| t.is_some());
    let (a, b) = match (has("increase")?, has("decrease")?, has("f")?, has("g")?) {
        (true, true, false, false) => ("increase", "decrease"),
        (false, false, true, true) => ("f", "g"),
        (true, false, false, false) => return Err(ParamError::new("decrease", "is required with increase (packets removed per loss event)")),
        (false, true, false, false) => return Err(ParamError::new("increase", "is required with decrease (packets added per RTT)")),
        (false, false, true, false) => return Err(ParamError::new("g", "is required with f (CYRF: W <- W - W*g(W) per loss event)")),
        (false, false, false, true) => return Err(ParamError::new("f", "is required with g (CYRF: W <- W + W/f(W) per RTT)")),
        (false, false, false, false) => return Err(ParamError::new("increase", "give increase and decrease, or the CYRF pair f and g")),
        _ => {
            let f = if has("f")? { "f" } else { "g" };
            return Err(ParamError::new(f, "give either increase and decrease, or f and g, not both forms"));
        }
    };
    let mut used = vec![false; p.named.len()];
    for field in [a, b] {
        let text = p.text(field)?.expect("present: checked above");
        let (_, u) = Program::compile_checked(text, VARIABLES, &p.named).map_err(|e| ParamError::new(field, e.to_string()))?;
        for (x, y) in used.iter_mut().zip(u) {
            *x |= y;
        }
    }
    for ((name, _), u) in p.named.iter().zip(used) {
        if !u {
            p.warnings.push(format!("formula constant '{name}' is not used by {a} or {b}"));
        }
    }
    Ok(())
}

/// A controller whose increase and decrease are user formulas.
#[derive(Clone, Debug)]
pub struct Formula {
    /// Per-RTT increment (or CYRF f when `cyrf`).
    up: Program,
    /// Amount removed per loss event (or CYRF g when `cyrf`).
    down: Program,
    cyrf: bool,
    up_name: &'static str,
    down_name: &'static str,
    vars: [f64; 7],
    /// w0/w_max are taken from the window when congestion avoidance starts.
    fresh: bool,
    error: Option<String>,
    w: Window,
}

impl Formula {
    /// Build from validated parameters (formulas already compiled once by validation).
    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        let cyrf = p.text("f")?.is_some();
        let (a, b) = if cyrf { ("f", "g") } else { ("increase", "decrease") };
        let compile = |field: &str| {
            let text = p.text(field)?.ok_or_else(|| ParamError::new(field, "is missing"))?;
            Program::compile(text, VARIABLES, &p.named).map_err(|e| ParamError::new(field, e.to_string()))
        };
        Ok(Self::new(compile(a)?, compile(b)?, cyrf, initial_window, cap))
    }

    /// From compiled programs over `VARIABLES`: per-RTT increment and per-loss removal, or
    /// (`cyrf`) f and g.
    pub fn new(up: Program, down: Program, cyrf: bool, initial_window: f64, cap: f64) -> Self {
        let (up_name, down_name) = if cyrf { ("f", "g") } else { ("increase", "decrease") };
        let mut vars = [0.0; 7];
        vars[RTT] = f64::NAN;
        vars[MIN_RTT] = f64::INFINITY;
        Formula { up, down, cyrf, up_name, down_name, vars, fresh: true, error: None, w: Window::new(initial_window, cap) }
    }

    fn fault(&mut self, which: &'static str, text: &str, value: f64, now: f64) {
        if self.error.is_none() {
            let v = &self.vars;
            self.error = Some(format!(
                "formula {which} = \"{text}\" evaluated to {value} at {now:.6} s (w = {}, w_max = {}, w0 = {}, t = {}, rtt = {}, min_rtt = {}, ssthresh = {})",
                v[W], v[W_MAX], v[W0], v[T], v[RTT], v[MIN_RTT], v[SSTHRESH]
            ));
        }
    }

    /// The window's variables as the formulas last saw them (w, w_max, w0, t, rtt, min_rtt, ssthresh).
    pub fn variables(&self) -> [f64; 7] {
        self.vars
    }

    #[cfg(test)]
    pub(crate) fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }
}

impl Controller for Formula {
    fn on_rtt_sample(&mut self, _now: f64, rtt: f64) {
        self.vars[RTT] = rtt;
        if rtt < self.vars[MIN_RTT] {
            self.vars[MIN_RTT] = rtt;
        }
    }

    fn on_ack(&mut self, ack: &Ack) {
        if self.error.is_some() {
            return;
        }
        if let Some(r) = ack.rtt {
            self.vars[RTT] = r;
        }
        if ack.min_rtt < self.vars[MIN_RTT] {
            self.vars[MIN_RTT] = ack.min_rtt;
        }
        let w = self.w.cwnd;
        if self.w.in_slow_start() {
            self.w.slow_start();
            self.vars[T] += 1.0 / w;
            return;
        }
        if self.fresh {
            self.fresh = false;
            self.vars[W_MAX] = w;
            self.vars[W0] = w;
            self.vars[T] = 0.0;
        }
        self.vars[W] = w;
        self.vars[SSTHRESH] = self.w.ssthresh;
        let per_rtt = if self.cyrf { w / self.up.eval(&self.vars) } else { self.up.eval(&self.vars) };
        if !per_rtt.is_finite() {
            let text = self.up.text().to_string();
            self.fault(self.up_name, &text, per_rtt, ack.now);
            return;
        }
        let inc = per_rtt / w;
        if w + inc < 1.0 {
            self.w.cwnd = 1.0_f64.min(self.w.cap);
        } else {
            self.w.grow(inc);
        }
        self.vars[T] += 1.0 / w;
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        if self.error.is_some() {
            return;
        }
        let w = ev.window;
        if self.w.in_slow_start() {
            self.w.reduce_to(w * 0.5);
        } else {
            self.vars[W] = w;
            self.vars[SSTHRESH] = self.w.ssthresh;
            let removed = if self.cyrf { w * self.down.eval(&self.vars) } else { self.down.eval(&self.vars) };
            if !removed.is_finite() {
                let text = self.down.text().to_string();
                self.fault(self.down_name, &text, removed, ev.now);
                return;
            }
            self.w.reduce_to(w - removed);
        }
        self.vars[W_MAX] = w;
        self.vars[W0] = self.w.cwnd;
        self.vars[T] = 0.0;
        self.fresh = false;
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
        self.vars[T] = 0.0;
        self.fresh = true;
    }

    window_in_field!();

    fn error(&self) -> Option<String> {
        self.error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    fn eval(text: &str, w: f64) -> f64 {
        Program::compile(text, VARIABLES, &[]).unwrap().eval(&[w, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    }

    fn err(text: &str) -> String {
        Program::compile(text, VARIABLES, &[]).unwrap_err().to_string()
    }

    #[test]
    fn parses_and_evaluates() {
        assert_eq!(eval("1 + 2 * 3", 0.0), 7.0);
        assert_eq!(eval("(1 + 2) * 3", 0.0), 9.0);
        assert_eq!(eval("2 ^ 3 ^ 2", 0.0), 512.0); // right-associative
        assert_eq!(eval("-2 ^ 2", 0.0), -4.0);
        assert_eq!(eval("2 ^ -1", 0.0), 0.5);
        assert_eq!(eval("10 - 4 - 3", 0.0), 3.0);
        assert_eq!(eval("12 / 3 / 2", 0.0), 2.0);
        assert_eq!(eval("--3", 0.0), 3.0);
        assert_eq!(eval("1.5e2 + .5", 0.0), 150.5);
        assert_eq!(eval("log(w)/w", 8.0), libm::log(8.0) / 8.0);
        assert_eq!(eval("ln(x)", 8.0), libm::log(8.0));
        assert_eq!(eval("min(w, 3) + max(w, 3) + pow(w, 2) + abs(-w) + sqrt(w*4)", 5.0), 3.0 + 5.0 + 25.0 + 5.0 + 20.0_f64.sqrt());
        assert_eq!(eval("exp(0)", 0.0), 1.0);
        let p = Program::compile("a*w + b", VARIABLES, &[("a".into(), 2.0), ("b".into(), 1.0)]).unwrap();
        assert_eq!(p.eval(&[3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 7.0);
        assert!(p.uses(W) && !p.uses(T));
        // Constant folding keeps the run-time arithmetic.
        let p = Program::compile("0.5*log(2)", VARIABLES, &[]).unwrap();
        assert!(p.is_constant());
        assert_eq!(p.eval(&[0.0; 7]), 0.5 * libm::log(2.0));
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(err("log(w) + )"), "unexpected ')' at column 10");
        assert_eq!(err("w * (2 + 3"), "expected ')' but found end of formula at column 11");
        assert_eq!(err("2 +"), "unexpected end of formula at column 4");
        assert_eq!(err("w w"), "unexpected 'w' at column 3");
        assert!(err("foo + 1").starts_with("unknown name 'foo' (known: w, w_max"), "{}", err("foo + 1"));
        assert!(err("sin(w)").starts_with("unknown function 'sin'"), "{}", err("sin(w)"));
        assert_eq!(err("log(w, 2)"), "log takes 1 argument, got 2 at column 1");
        assert_eq!(err("1 + max(w)"), "max takes 2 arguments, got 1 at column 5");
        assert_eq!(err("log + 1"), "function 'log' needs arguments in parentheses at column 1");
        assert_eq!(err("   "), "empty formula at column 4");
        assert_eq!(err("w $ 2"), "unexpected '$' at column 3");
        let deep = format!("{}w{}", "(1+".repeat(70), ")".repeat(70));
        assert!(err(&deep).contains("nested too deeply"));
        assert_eq!(err(&format!("{}w{}", "(".repeat(4000), ")".repeat(4000))), "formula is nested too deeply (max 200 levels) at column 201");
        assert_eq!(err(&"-".repeat(9000)), "formula is nested too deeply (max 200 levels) at column 201");
        assert_eq!(err(&format!("w{}", "^w".repeat(4000))), "formula is nested too deeply (max 200 levels) at column 402");
        assert_eq!(err(&format!("{}w{}", "log(".repeat(1900), ")".repeat(1900))), "formula is nested too deeply (max 200 levels) at column 801");
        assert_eq!(err(&"w+".repeat(30_000)), "formula too long (60000 characters, max 10000) at column 10001");
        // 200 levels are fine (the stack code may need more slots than that: its own limit).
        let ok = format!("{}w{}", "(".repeat(MAX_NEST), ")".repeat(MAX_NEST));
        assert_eq!(eval(&ok, 3.0), 3.0);
        assert_eq!(eval(&format!("{}w", "-".repeat(MAX_NEST)), 3.0), 3.0);
    }

    /// Regression (issue 17, item 2): sums and products as long as a formula may be parse,
    /// fold, compile, evaluate and drop without recursing per term (here on a 64 kB stack). The
    /// recursion of `MAX_NEST` levels takes about 1.5 MB unoptimised and 250 kB optimised: within
    /// the 2 MB a spawned thread has by default (the main thread has 8 MB).
    #[test]
    fn long_chains_do_not_recurse() {
        let on_stack = |kb: usize, f: fn()| std::thread::Builder::new().stack_size(kb * 1024).spawn(f).unwrap().join().unwrap();
        on_stack(64, || {
            let n = MAX_LEN.div_ceil(2);
            let sum = vec!["w"; n].join("+");
            assert_eq!(sum.len(), 2 * n - 1);
            assert!(sum.len() <= MAX_LEN);
            let p = Program::compile(&sum, VARIABLES, &[]).unwrap();
            assert_eq!(p.eval(&[1.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), (1..n).fold(1.5, |a, _| a + 1.5));
            let prod = vec!["w"; n].join("*");
            assert_eq!(Program::compile(&prod, VARIABLES, &[]).unwrap().eval(&[1.0001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), (1..n).fold(1.0001, |a, _| a * 1.0001));
            let mixed = format!("1{}", "-w/2+3*w".repeat((MAX_LEN - 1) / 8));
            assert!(Program::compile(&mixed, VARIABLES, &[]).is_ok());
        });
        on_stack(2048, || {
            let deep = |open: &str, close: &str| format!("{}w{}", open.repeat(MAX_NEST), close.repeat(MAX_NEST));
            for ok in [deep("(", ")"), deep("-", ""), deep("max(w,", ")"), deep("w^", "")] {
                assert!(Program::compile(&ok, VARIABLES, &[]).is_ok() || err(&ok).contains("stack slots"), "{}", err(&ok));
            }
            for hostile in [format!("{}w{}", "(".repeat(4000), ")".repeat(4000)), "-".repeat(9000), format!("w{}", "^w".repeat(4000)), format!("{}w{}", "max(w,".repeat(1400), ")".repeat(1400))] {
                assert!(err(&hostile).contains("nested too deeply (max 200 levels)"), "{}", err(&hostile));
            }
        });
    }

    #[test]
    fn the_registry_states_the_limits() {
        assert!(formula_info().notes.contains(&format!("at most {MAX_LEN} characters and {MAX_NEST} levels of nesting")));
    }

    /// The flat chains, folded as they are parsed, compile to exactly the code the left-deep
    /// binary trees they replaced did after a separate folding pass (same instructions, same
    /// folded constants), so every formula evaluates bit-identically.
    #[test]
    fn chains_compile_like_the_left_deep_trees_they_replaced() {
        #[derive(Debug)]
        enum Old {
            Num(f64),
            Var(u8),
            Neg(Box<Old>),
            Bin(BinOp, Box<Old>, Box<Old>),
            Call(Func, Vec<Old>),
        }
        fn to_old(n: &Node) -> Old {
            match n {
                Node::Num(v) => Old::Num(*v),
                Node::Var(i) => Old::Var(*i),
                Node::Neg(a) => Old::Neg(Box::new(to_old(a))),
                Node::Bin(op, a, b) => Old::Bin(*op, Box::new(to_old(a)), Box::new(to_old(b))),
                Node::Chain(first, rest) => rest.iter().fold(to_old(first), |acc, (op, t)| Old::Bin(*op, Box::new(acc), Box::new(to_old(t)))),
                Node::Call(f, args) => Old::Call(*f, args.iter().map(to_old).collect()),
            }
        }
        // The previous fold and emit, verbatim but for the names.
        fn old_fold(n: Old) -> Old {
            match n {
                Old::Neg(a) => match old_fold(*a) {
                    Old::Num(v) => Old::Num(-v),
                    a => Old::Neg(Box::new(a)),
                },
                Old::Bin(op, a, b) => match (old_fold(*a), old_fold(*b)) {
                    (Old::Num(x), Old::Num(y)) => Old::Num(apply_bin(op, x, y)),
                    (a, b) => Old::Bin(op, Box::new(a), Box::new(b)),
                },
                Old::Call(f, args) => {
                    let args: Vec<Old> = args.into_iter().map(old_fold).collect();
                    if args.iter().all(|a| matches!(a, Old::Num(_))) {
                        let v: Vec<f64> = args.iter().map(|a| if let Old::Num(v) = a { *v } else { 0.0 }).collect();
                        Old::Num(apply_func(f, v[0], v.get(1).copied().unwrap_or(0.0)))
                    } else {
                        Old::Call(f, args)
                    }
                }
                n => n,
            }
        }
        fn old_emit(n: &Old, code: &mut Vec<Instr>, depth: usize, max: &mut usize) {
            *max = (*max).max(depth + 1);
            match n {
                Old::Num(v) => code.push(Instr::Const(*v)),
                Old::Var(i) => code.push(Instr::Var(*i)),
                Old::Neg(a) => {
                    old_emit(a, code, depth, max);
                    code.push(Instr::Neg);
                }
                Old::Bin(op, a, b) => {
                    old_emit(a, code, depth, max);
                    old_emit(b, code, depth + 1, max);
                    code.push(Instr::Bin(*op));
                }
                Old::Call(f, args) => {
                    for (i, a) in args.iter().enumerate() {
                        old_emit(a, code, depth + i, max);
                    }
                    code.push(if args.len() == 1 { Instr::F1(*f) } else { Instr::F2(*f) });
                }
            }
        }
        let consts = [("a".to_string(), 0.31), ("b".to_string(), 0.875)];
        let formulas = [
            "1/w", "0.3*w", "log(w)/w", "0.5*log(w)", "w^2/log(w)", "0.5*log(w)/w", "a*log(w)/w", "b*log(w)", "1 + 2 + w", "w + 1 + 2",
            "1 - 2 * 3 / w - 4 + w*w*2*3", "2*3*w/4/5", "-2^2 - -w^-1", "10 - 4 - 3 + w", "a*(1-b)/(1+b) * w^0.5 + min(w, 3)*2*3",
            "max(1+2+3, w) - sqrt(2)*sqrt(3) + exp(1)*w - abs(-w+1-2)", "(w_max - w)/w0 + t*rtt/min_rtt - ssthresh*0.5*0.5",
            "sqrt(2) + 1 + 2 + w", "1/3 - 1/7 + w*0*1", "-(2^0.5) - -w*(3-5)^2 + min(1, 2)*w", "pow(w, 2) * 3 * 4 / (1 + w + w^2 + w^3)", "((1+2)*(3+4))/w + ((w+1)*2)*3",
        ];
        let vars = [[8.0, 12.0, 6.0, 1.25, 0.1, 0.05, 20.0], [0.5, 1.0, 0.25, 0.0, 0.3, 0.3, 2.0], [1e6, 2e6, 5e5, 100.0, 1.0, 0.01, 64.0]];
        for f in formulas {
            let parse = |fold: bool| {
                let mut p = Parser { src: f, bytes: f.as_bytes(), pos: 0, vars: VARIABLES, consts: &consts, used_consts: vec![false; 2], nest: 0, fold };
                let tree = p.expr().unwrap();
                assert!(p.peek().is_none(), "{f}");
                tree
            };
            let tree = parse(false);
            let (mut old_code, mut old_max) = (Vec::new(), 0);
            old_emit(&old_fold(to_old(&tree)), &mut old_code, 0, &mut old_max);
            let new = Program::compile(f, VARIABLES, &consts).unwrap();
            assert_eq!(format!("{:?}", new.code), format!("{old_code:?}"), "{f}");
            let (mut new_max, mut uses) = (0, 0);
            emit(&parse(true), &mut Vec::new(), 0, &mut new_max, &mut uses);
            assert_eq!(new_max, old_max, "{f}");
            for v in &vars {
                let old = Program { code: old_code.clone(), text: String::new(), uses: 0 }.eval(v);
                assert_eq!(new.eval(v).to_bits(), old.to_bits(), "{f} at {v:?}");
            }
        }
    }

    /// A constant part that is not a finite number is refused at load, naming it and its
    /// column (it used to pass validation and stop the run at its first use); a formula whose
    /// non-finite values depend on its variables is not.
    #[test]
    fn non_finite_constant_parts_are_refused_at_load() {
        let refused = |text: &str, part: &str, value: &str, column: usize| {
            assert_eq!(err(text), format!("constant part '{part}' must be a finite number; it evaluates to {value} at column {column}"), "{text}");
        };
        refused("1/0", "1/0", "inf", 1);
        refused("w + 0/0", "0/0", "NaN", 5);
        refused("0.5*log(0)*w", "log(0)", "-inf", 5);
        refused("w*log( 0 )", "log( 0 )", "-inf", 3);
        refused("sqrt(-1)", "sqrt(-1)", "NaN", 1);
        refused("1e308*1e308*w", "1e308*1e308", "inf", 1);
        refused("w + 10^400", "10^400", "inf", 5);
        refused("exp(1000) - w", "exp(1000)", "inf", 1);
        refused("-(1/0)", "1/0", "inf", 3);
        refused("max(w, 2 - 1/0)", "1/0", "inf", 12);
        refused("min(w, pow(0, -1))", "pow(0, -1)", "inf", 8);
        refused("1 + 2 - 1e308*10 + w", "1e308*10", "inf", 9);
        refused(&format!("w + 1/({}0)", "0+".repeat(50)), "1/(0+0+0+0+0+0+0+0+0+0+0+0+0+0+0+0+0+0+0...", "inf", 5);
        // Named constants: the part as written.
        let e = Program::compile("w + a/b", VARIABLES, &[("a".into(), 1.0), ("b".into(), 0.0)]).unwrap_err().to_string();
        assert_eq!(e, "constant part 'a/b' must be a finite number; it evaluates to inf at column 5");
        // Left-deep chains fold only their constant prefix, so a part after a variable is not
        // a constant sub-expression: `w*1e308*1e308` = `(w*1e308)*1e308`, finite for w = 0.
        for ok in ["1/w", "log(w)/w", "sqrt(w - 1)", "1/(w - 20)", "w^-1", "0*w", "log(w_max/w0)", "1/t", "w*1e308*1e308", "exp(w)", "1/(0*w)"] {
            assert!(Program::compile(ok, VARIABLES, &[]).is_ok(), "{ok}: {}", err(ok));
        }
        assert_eq!(eval("w*1e308*1e308", 0.0), 0.0);
        // Finite constant parts still fold.
        assert!(Program::compile("log(2)/sqrt(3) - exp(-1000) + 10^-400", VARIABLES, &[]).unwrap().is_constant());
    }

    #[test]
    fn validation_reports_field_and_column() {
        let v = |j: serde_json::Value| formula_info().validate(j.as_object().unwrap());
        let e = v(json!({"increase": "log(w))", "decrease": "1"})).unwrap_err();
        assert_eq!((e.field.as_str(), e.message.as_str()), ("increase", "unexpected ')' at column 7"));
        let e = v(json!({"increase": "1"})).unwrap_err();
        assert_eq!(e.field, "decrease");
        let e = v(json!({"increase": "1", "decrease": "1", "f": "w"})).unwrap_err();
        assert_eq!(e.field, "f");
        let e = v(json!({"increase": 3, "decrease": "1"})).unwrap_err();
        assert!(e.message.contains("formula in a string"), "{}", e.message);
        let e = v(json!({"increase": "a/w", "decrease": "1", "w": 2})).unwrap_err();
        assert_eq!(e.field, "w");
        let e = v(json!({"increase": "a/w", "decrease": "1", "a": "x"})).unwrap_err();
        assert_eq!(e.field, "a");
        let p = v(json!({"increase": " a/w ", "decrease": "b", "a": 0.5, "b": 1, "c": 3})).unwrap();
        assert_eq!(p.to_json(), json!({"increase": "a/w", "decrease": "b", "a": 0.5, "b": 1.0, "c": 3.0}));
        assert_eq!(p.warnings.len(), 1, "unused constant c");
        let e = v(json!({"increase": "1/w", "decrease": "0.5*log(0)"})).unwrap_err();
        assert_eq!((e.field.as_str(), e.message.as_str()), ("decrease", "constant part 'log(0)' must be a finite number; it evaluates to -inf at column 5"));
        let p = v(json!({"f": "w^2/log(w)", "g": "0.5*log(w)/w"})).unwrap();
        assert!(p.warnings.is_empty());
    }

    fn controller(inc: &str, dec: &str, cyrf: bool) -> Formula {
        let mut c = Formula::new(Program::compile(inc, VARIABLES, &[]).unwrap(), Program::compile(dec, VARIABLES, &[]).unwrap(), cyrf, 2.0, f64::INFINITY);
        c.window_mut().ssthresh = 1.0;
        c
    }

    #[test]
    fn increase_and_decrease_follow_the_formulas() {
        let mut c = controller("2", "w/4", false);
        c.window_mut().cwnd = 40.0;
        let inc = one_rtt(&mut c);
        assert!((inc - 2.0).abs() < 0.05, "{inc}");
        let w = c.window();
        c.on_loss_event(&loss(w));
        assert!((c.window() - 0.75 * w).abs() < 1e-12);
        let v = c.variables();
        assert_eq!((v[W_MAX], v[W0], v[T]), (w, 0.75 * w, 0.0));
        rtts(&mut c, 3);
        // Σ 1/W over the ACKs: a little under 3 while the window grows (2 packets/RTT at W ≈ 30).
        assert!((c.variables()[T] - 3.0).abs() < 0.15, "t counts RTTs: {}", c.variables()[T]);
        // CYRF form: TCP is f = w, g = 1/2.
        let mut c = controller("w", "0.5", true);
        c.window_mut().cwnd = 30.0;
        let inc = one_rtt(&mut c);
        assert!((inc - 1.0).abs() < 0.03, "{inc}");
        c.on_loss_event(&loss(30.0));
        assert_eq!(c.window(), 15.0);
    }

    #[test]
    fn nan_or_infinity_stops_with_a_message_instead_of_panicking() {
        let mut c = controller("1/(w - 20)", "1", false);
        c.window_mut().cwnd = 20.0;
        c.on_ack(&ack_at(3.25, 0.1));
        let e = c.error().expect("inf must be reported");
        println!("{e}");
        assert!(e.contains("increase = \"1/(w - 20)\" evaluated to inf at 3.250000 s"), "{e}");
        assert_eq!(c.window(), 20.0, "window kept");
        c.on_ack(&ack());
        c.on_loss_event(&loss(20.0));
        assert_eq!(c.window(), 20.0);
        let mut c = controller("1", "sqrt(-w)", false);
        c.window_mut().cwnd = 10.0;
        c.on_loss_event(&LossEvent { now: 7.5, window: 10.0, in_flight: 0, ecn: false });
        assert!(c.error().unwrap().contains("decrease = \"sqrt(-w)\" evaluated to NaN at 7.500000 s"));
    }
}
