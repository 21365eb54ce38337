//! The `baton` binary: everything lives in the library so tests and re-entry
//! (the job runner is baton itself) share one code path.
fn main() {
    let code = baton::run(std::env::args_os());
    std::process::exit(code);
}
