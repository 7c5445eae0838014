//! The `collc` binary: a thin shell over [`collc::cli`].

fn main() {
    std::process::exit(collc::cli::main());
}
