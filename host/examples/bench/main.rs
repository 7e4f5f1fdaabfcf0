//! `bench`: the host's benchmark tools, kept out of the production binary.
//!
//! ```text
//! cargo build -p noise-filter-host --example bench --profile server
//! target/server/examples/bench floor --listen 127.0.0.1:0     # load.sh's floor
//! target/server/examples/bench call [--component FILE] …      # a request's phases
//! ```
//!
//! `floor` answers every request with precomputed bytes through bare hyper
//! (what `host/benches/load.sh` measures the server against); `call` times
//! requests through the component in process, against the native core.

mod call;
mod floor;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use noise_filter_host::store::{SQLITE_FILE_NAME, Stores};

#[derive(Debug, Parser)]
#[command(name = "bench", about = "The host's benchmark tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve precomputed response bytes with bare hyper: the load benchmark's floor.
    Floor(floor::FloorArgs),
    /// Time requests through the component in process, against the native
    /// core: where a request's time goes.
    Call(call::ProbeArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match cli.command {
            Command::Floor(args) => floor::run(args).await,
            Command::Call(args) => {
                let component = args.component.clone().unwrap_or_else(default_component);
                let dir = args.state_dir.clone().unwrap_or_else(|| {
                    std::env::temp_dir().join(format!("noise-filter-bench-{}", std::process::id()))
                });
                let file = dir.join(SQLITE_FILE_NAME);
                let stores = Stores::open(
                    &args.store,
                    &args.rate_store,
                    &file,
                    &noise_filter_host::store::ConnectOptions::default(),
                )
                .await?;
                call::run(args, component, stores).await
            }
        }
    })
}

/// `<target>/wasm32-wasip2/component/noise_filter_spin.wasm`, where this
/// example is `<target>/<profile>/examples/bench`.
fn default_component() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let target = exe.ancestors().nth(3).unwrap_or(Path::new("target"));
    target
        .join("wasm32-wasip2")
        .join("component")
        .join("noise_filter_spin.wasm")
}
