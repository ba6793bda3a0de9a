//! The async runtime of the addon: one tokio worker thread.
//!
//! Every task of the host (each server's transport, rmcp's service loop,
//! the actor, the calls in flight) runs on that one worker, so a call's
//! hand-offs between tasks are plain queue pushes on one thread instead of
//! cross-thread wake-ups (futex), the cost that dominated a profile of the
//! stdio call path with tokio's default of one worker per core. The JS
//! thread is the other busy thread. Blocking work (`spawn_blocking`: config
//! file reads, DNS lookups, OAuth grants driven synchronously) keeps tokio's
//! blocking pool. Installed with napi-rs's `create_custom_tokio_runtime`
//! before the first async method runs.

use ahp_mcp_host::limits::RUNTIME_WORKER_THREADS;

/// Installs the runtime (module load; napi-rs runs it once per process),
/// after giving back the pages of the addon's relocation table, which the
/// loader has applied by then (`ahp_mcp_host::release_loader_pages`).
#[napi_derive::module_init]
fn install_runtime() {
    ahp_mcp_host::release_loader_pages();
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(RUNTIME_WORKER_THREADS)
        .thread_name("ahp-mcp-host")
        .enable_all()
        .build();
    // Without it napi-rs builds its default runtime on first use.
    if let Ok(runtime) = built {
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}
