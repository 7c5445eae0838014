//! The `collc` binary: a thin shell over [`collc::cli`], with mimalloc as its allocator (the
//! lowering, the verifier and the backends allocate many small vectors; see benches/pipeline.rs).

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(collc::cli::main());
}
