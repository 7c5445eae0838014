//! The `collc` binary: a thin shell over [`collc::cli`], with mimalloc as its allocator (the
//! lowering, the verifier and the backends allocate many small vectors; see benches/pipeline.rs),
//! and a probe of the standard streams that runs before the Rust runtime starts.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs [`collc::cli::probe_standard_streams`] as an ELF constructor, before the Rust runtime
/// reopens a standard stream the shell closed (`>&-`) on /dev/null and so hides that it was
/// closed. The constructor only stats two paths and stores two flags.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static PROBE_STANDARD_STREAMS: extern "C" fn() = probe_standard_streams;

#[cfg(target_os = "linux")]
extern "C" fn probe_standard_streams() {
    collc::cli::probe_standard_streams();
}

fn main() {
    collc::cli::exit(collc::cli::main());
}
