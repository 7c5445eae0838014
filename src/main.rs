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

// mimalloc's own API (linked in by the `mimalloc` crate): options by their index in its
// `mi_option_e` (libmimalloc-sys 0.1.49, mimalloc 3.3 and 2.3: `mi_option_purge_delay` is 15).
unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

fn main() {
    // A sweep (compare, `--runs`, the exploration) frees each run's large vectors and
    // allocates them again for the next: returned to the kernel 10 ms after they are freed
    // (mimalloc's default), they come back as fresh pages the kernel zeroes, which took 3 of
    // 26 s of CPU time of `collc compare examples/fat_tree_1024.coll --families ring`. A
    // command runs once and exits, so freed memory stays with the process (the peak is the
    // same); the language server, which runs for hours, keeps the default.
    if std::env::args_os().nth(1).is_none_or(|a| a != "lsp") {
        // SAFETY: sets one integer option; mimalloc reads its options atomically.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
    collc::cli::exit(collc::cli::main());
}

#[cfg(test)]
mod tests {
    use super::MI_OPTION_PURGE_DELAY;

    unsafe extern "C" {
        fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    }

    #[test]
    fn the_option_main_sets_is_mimallocs_purge_delay() {
        // Options go by index: a mimalloc that numbers them otherwise would have `main` set
        // another one. The purge delay's default is 1000 ms in mimalloc 3 and 10 ms in
        // mimalloc 2; the options beside it default to 0 or 1 (its neighbours in 3.3:
        // eager_commit_delay 1, use_numa_nodes 0).
        // SAFETY: reads one integer option.
        let delay = unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert!(
            delay == 1000 || delay == 10,
            "mimalloc option {MI_OPTION_PURGE_DELAY} is {delay}, not a purge delay's default"
        );
    }
}
