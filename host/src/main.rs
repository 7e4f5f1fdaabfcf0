//! `noise-filter`: serves the noise-filter Spin component under wasmtime,
//! and administers its key-value store. (`noise-filter-host`, its name
//! before, still runs it: `src/bin/noise-filter-host.rs`.)
//!
//! ```text
//! noise-filter serve [--listen 127.0.0.1:8080]
//! noise-filter keys create --account acme [--label ci]
//! noise-filter keys list [--account acme]
//! noise-filter keys revoke <hash prefix>
//! noise-filter patterns add --account acme --pattern "…" [--type regex] …
//! noise-filter patterns list --account acme
//! noise-filter patterns remove --account acme <id>
//! noise-filter patterns import --account acme patterns.json
//! noise-filter exclusions add --account acme --id googlebot [--until 2026-12-31]
//! noise-filter exclusions list --account acme
//! noise-filter exclusions remove --account acme --id googlebot
//! noise-filter accounts export --account acme > acme.json
//! noise-filter accounts import acme.json
//! noise-filter report events.jsonl.gz [--html report.html] …
//! ```
//!
//! Every command works on the same store, chosen with `--state-dir`,
//! `--store` and `--rate-store` (see `docs/SERVING.md`), or with `--remote
//! URL` on a deployment's admin API (the token in `NOISE_FILTER_ADMIN_TOKEN`);
//! `--json` prints the API's JSON.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use noise_filter_core::admin_api::body;
use noise_filter_core::{Kind, NewExclusion, NewPattern};

use noise_filter_host::admin::{Admin, Output};
use noise_filter_host::connections::ConnectionLimits;
use noise_filter_host::logs::LogFormat;
use noise_filter_host::remote::Remote;
use noise_filter_host::store::{self, StoreSpec, Stores};
use noise_filter_host::{admin, serve};

/// The process's allocator. Every request allocates and frees its answer
/// body (about 200 KB, lifted out of the component) and many small values;
/// glibc's malloc consolidates its bins on a free that large. Under the load
/// benchmark allocation and freeing took 6.3 µs of a request's CPU with
/// glibc and 4.8 µs with mimalloc (docs/BENCHMARKS.md, "Host: the cost of
/// the operations work"; docs/DECISIONS.md, "Serving").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "noise-filter",
    version,
    about = "Serve the noise-filter component under wasmtime and administer its key-value store"
)]
struct Cli {
    #[command(flatten)]
    store: StoreArgs,
    /// Log lines on stderr as `text` or `json` (one object per line). What
    /// is logged: `RUST_LOG` (default `info`: one `access` line per request,
    /// warnings, errors; `RUST_LOG=warn` drops the access lines).
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "text",
        env = "NOISE_FILTER_LOG_FORMAT"
    )]
    log_format: LogFormat,
    /// Administer a deployment through its admin API (`/admin/v1/`) at this
    /// base URL (`https://…`) instead of a store: the same commands, the
    /// same output. The token is taken from `NOISE_FILTER_ADMIN_TOKEN`.
    #[arg(long, global = true, value_name = "URL", env = "NOISE_FILTER_REMOTE")]
    remote: Option<String>,
    /// Print what an admin command did as the admin API's JSON (one
    /// document on stdout), for scripts.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Args)]
struct StoreArgs {
    /// Directory of Spin's SQLite store (`sqlite_key_value.db`). Default: the
    /// `.spin` folder next to `spin-app/spin.toml` when run inside the
    /// repository, else `./.spin`.
    #[arg(long, global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Store of the `default` label (keys, custom patterns): `sqlite`,
    /// `redis://[user:password@]host:port[/db]` (`rediss://` for TLS), or a
    /// Redis Cluster (or Valkey cluster):
    /// `redis+cluster://[user:password@]host:port[,host:port…]`
    /// (`rediss+cluster://` for TLS; any reachable node finds the rest).
    /// Give a URL with a password through the environment, not the command
    /// line (`ps` shows the command line).
    #[arg(
        long,
        global = true,
        default_value = "sqlite",
        value_name = "STORE",
        env = "NOISE_FILTER_STORE",
        hide_env_values = true
    )]
    store: StoreSpec,
    /// Store of the `rate` label (counters): `memory`, `sqlite`,
    /// `redis://…` or `redis+cluster://…`. Default: `memory`, or the same
    /// Redis as `--store`.
    #[arg(
        long,
        global = true,
        value_name = "STORE",
        env = "NOISE_FILTER_RATE_STORE",
        hide_env_values = true
    )]
    rate_store: Option<StoreSpec>,
    /// How long one call to a Redis store may take before it counts as a
    /// store failure: the request gets the store's 503, an admin command
    /// fails. Connecting may take up to 5 s.
    #[arg(long, global = true, value_name = "MS", env = "NOISE_FILTER_STORE_TIMEOUT_MS",
          default_value_t = store::DEFAULT_DEADLINE.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    store_timeout_ms: u64,
    /// For `rediss://` and `rediss+cluster://` stores: a PEM file of the certificate authorities
    /// that sign the server's certificate (a managed Redis' CA, a private
    /// CA). Default: the system's trust store.
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        env = "NOISE_FILTER_REDIS_CA_FILE"
    )]
    redis_ca_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the component over HTTP.
    Serve(ServeArgs),
    /// Create, list and revoke API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Add, list, remove and import an account's custom patterns.
    #[command(subcommand)]
    Patterns(PatternsCommand),
    /// Read an export of events: how much is noise, per pattern, what no
    /// pattern catches (`report --help`).
    #[command(disable_help_flag = true)]
    Report {
        /// The report's arguments, read by the core (src/report.rs).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Turn built-in patterns off for an account (by id or category,
    /// optionally until a date), list and remove those exclusions.
    #[command(subcommand)]
    Exclusions(ExclusionsCommand),
    /// Move an account between stores: export it (keys as hashes, patterns,
    /// exclusions) as one JSON document, import that document.
    #[command(subcommand)]
    Accounts(AccountsCommand),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Address to listen on (port 0: any free port; the first line printed
    /// says which).
    #[arg(long, default_value = "127.0.0.1:8080", env = "NOISE_FILTER_LISTEN")]
    listen: SocketAddr,
    /// Time a client has to send a request's head, on a new connection and
    /// between two requests of a kept-alive one (so also the idle timeout).
    #[arg(long, value_name = "MS", env = "NOISE_FILTER_HEADER_READ_TIMEOUT_MS",
          default_value_t = ConnectionLimits::PUBLIC.header_read_timeout.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    header_read_timeout_ms: u64,
    /// Most connections open at once; beyond it new clients wait in the
    /// kernel's backlog. Keep it below `ulimit -n`, with room for the
    /// operations listener's 32 and the stores' connections.
    #[arg(long, value_name = "N", env = "NOISE_FILTER_MAX_CONNECTIONS",
          default_value_t = ConnectionLimits::PUBLIC.max_connections as u32,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// How long one connection may stay open, however busy; then it closes
    /// after the answer in flight (a client that keeps a connection alive
    /// cannot hold its slot for ever).
    #[arg(long, value_name = "MS", env = "NOISE_FILTER_MAX_CONNECTION_AGE_MS",
          default_value_t = ConnectionLimits::PUBLIC.max_age.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_connection_age_ms: u64,
    /// Serve `/livez`, `/readyz` and `/metrics` (Prometheus) on this address
    /// too (keep it off the public network). Default: not served.
    /// `--admin-listen` and `NOISE_FILTER_ADMIN_LISTEN`, its names before,
    /// still work.
    #[arg(
        long,
        alias = "admin-listen",
        value_name = "ADDR",
        env = "NOISE_FILTER_OPS_LISTEN"
    )]
    ops_listen: Option<SocketAddr>,
    /// How long a connection told to close (SIGTERM or SIGINT, or its age
    /// reached) may take to finish the request in flight before it is
    /// closed outright.
    #[arg(
        long,
        value_name = "MS",
        env = "NOISE_FILTER_SHUTDOWN_TIMEOUT_MS",
        default_value_t = ConnectionLimits::PUBLIC.grace.as_millis() as u64
    )]
    shutdown_timeout_ms: u64,
    /// The component (`noise_filter_spin.wasm`). Default: the file of that
    /// name beside this binary, else where `cargo xtask component` puts it
    /// in the target folder this binary was built in.
    #[arg(long, value_name = "FILE", env = "NOISE_FILTER_COMPONENT")]
    component: Option<PathBuf>,
    /// Fix the component's wall clock at this many milliseconds since the
    /// epoch (tests: deterministic bytes and rate windows).
    #[arg(long, hide = true, value_name = "MS")]
    fixed_time_ms: Option<u64>,
    /// When the store holds no key, create one for account `demo` and print
    /// it (`cargo xtask serve` passes it: a development convenience). A
    /// server never mints a key by itself otherwise.
    #[arg(long)]
    demo_key: bool,
    /// Requests one component instance serves, one after another, before it
    /// is dropped (wasmtime serve's option of the same name). 1: a fresh
    /// instance for every request, as Spin runs a WASI 0.2 component.
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_REUSE,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_instance_reuse_count: u32,
    /// A file holding the admin token(s) that turn the admin API on
    /// (`/admin/v1/`; several tokens separated by commas). Or set
    /// `NOISE_FILTER_ADMIN_TOKEN` (never a flag: `ps` shows flags). Neither:
    /// the admin API is off and its paths answer 404.
    #[arg(long, value_name = "FILE", env = "NOISE_FILTER_ADMIN_TOKEN_FILE")]
    admin_token_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Create a key for an account; the key is printed once, stored as a hash.
    Create {
        /// The account (a-z, 0-9, '.', '_', '-').
        #[arg(long)]
        account: String,
        /// A note for the listing ("ci", "production").
        #[arg(long, default_value = "")]
        label: String,
        /// How many keys to create (benchmarks), one per line.
        #[arg(long, default_value_t = 1, hide = true)]
        count: u32,
    },
    /// List keys: hash prefix, account, label, created, revoked (never the key).
    List {
        /// Only this account's keys.
        #[arg(long)]
        account: Option<String>,
    },
    /// Revoke a key, named by the start of its hash as `keys list` shows it.
    Revoke {
        /// At least 6 hex digits of the key's hash.
        hash_prefix: String,
    },
}

#[derive(Debug, Subcommand)]
enum PatternsCommand {
    /// Add one custom pattern (validated; refused patterns write nothing).
    Add {
        /// The account.
        #[arg(long)]
        account: String,
        /// The pattern text.
        #[arg(long)]
        pattern: String,
        /// `string` (case-insensitive substring) or `regex`.
        #[arg(long = "type", default_value = "string")]
        kind: String,
        /// One of the six categories (either variant's spelling) or `custom`.
        #[arg(long)]
        category: Option<String>,
        /// 0 to 1 (default 1).
        #[arg(long)]
        confidence: Option<f64>,
        /// Where the pattern comes from.
        #[arg(long)]
        source: Option<String>,
        /// An id of your choosing (`custom-…`); assigned when absent.
        #[arg(long)]
        id: Option<String>,
        /// When it stops being served: a date (`2026-12-31`, that day's
        /// start, UTC) or an RFC 3339 time. Absent: until removed.
        #[arg(long, value_name = "DATE")]
        until: Option<String>,
    },
    /// List an account's custom patterns.
    List {
        /// The account.
        #[arg(long)]
        account: String,
    },
    /// Remove one custom pattern by id.
    Remove {
        /// The account.
        #[arg(long)]
        account: String,
        /// The pattern's id.
        id: String,
    },
    /// Import patterns from a JSON array file: all of them, or none.
    Import {
        /// The account.
        #[arg(long)]
        account: String,
        /// The file.
        file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
enum ExclusionsCommand {
    /// Turn built-ins off for an account: every `--id`, `--category` and
    /// `--tag` given (all or none), until `--until` if given.
    Add {
        /// The account.
        #[arg(long)]
        account: String,
        /// The id of a built-in pattern (repeat for several).
        #[arg(long = "id", value_name = "ID")]
        ids: Vec<String>,
        /// A category, in either variant's spelling (repeat for several).
        #[arg(long = "category", value_name = "CATEGORY")]
        categories: Vec<String>,
        /// A tag, a sub-kind of the built-ins' categories (`ai-crawler`,
        /// `wallet`, …; repeat for several).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// When the exclusions stop applying: a date (`2026-12-31`, that
        /// day's start, UTC) or an RFC 3339 time. Absent: until removed.
        #[arg(long, value_name = "DATE")]
        until: Option<String>,
    },
    /// List an account's exclusions.
    List {
        /// The account.
        #[arg(long)]
        account: String,
    },
    /// Remove one exclusion: the built-in is served to the account again.
    #[command(group(clap::ArgGroup::new("excluded").required(true).multiple(false)))]
    Remove {
        /// The account.
        #[arg(long)]
        account: String,
        /// The excluded built-in's id.
        #[arg(long, group = "excluded")]
        id: Option<String>,
        /// The excluded category.
        #[arg(long, group = "excluded")]
        category: Option<String>,
        /// The excluded tag.
        #[arg(long, group = "excluded")]
        tag: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum AccountsCommand {
    /// Write an account as one JSON document on stdout: its keys as hashes
    /// (never the keys), its custom patterns and exclusions.
    Export {
        /// The account.
        #[arg(long)]
        account: String,
    },
    /// Import an account document into this store (or deployment): its
    /// keys keep working, unchanged. Refused, with nothing written, when the
    /// store holds other records for them.
    Import {
        /// The document `accounts export` wrote.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let logs = noise_filter_host::logs::init(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            logs.say(&format!("error: cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(cli));
    // The runtime's tasks (connections still closing) do not outlive it.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // After the log lines before it; like them, never waited for
            // longer than a moment if stderr does not take it.
            logs.say(&format!("error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    // The report reads a file: no store is opened for it.
    if let Command::Report { args } = &cli.command {
        return noise_filter_host::report::run(args).await;
    }
    let (state_dir, found) = match &cli.store.state_dir {
        Some(dir) => (dir.clone(), StateDir::Given),
        None => default_state_dir(),
    };
    let sqlite_path = state_dir.join(store::SQLITE_FILE_NAME);
    let rate = cli
        .store
        .rate_store
        .clone()
        .unwrap_or(match &cli.store.store {
            StoreSpec::Redis(url) => StoreSpec::Redis(url.clone()),
            _ => StoreSpec::Memory,
        });
    let store_line = format!(
        "store: default = {}, rate = {}",
        cli.store.store.describe(&sqlite_path),
        rate.describe(&store::rate_file(&sqlite_path))
    );
    let output = if cli.json { Output::Json } else { Output::Text };
    let command = match cli.command {
        Command::Serve(args) => {
            if cli.remote.is_some() {
                anyhow::bail!("--remote is for admin commands; serve serves a store");
            }
            let connect = connect_options(&cli.store)?;
            let stores = Stores::open(&cli.store.store, &rate, &sqlite_path, &connect).await?;
            return serve(args, stores, &store_line).await;
        }
        command => command,
    };
    // An admin command: on a deployment's API, or on a store.
    if let Some(url) = &cli.remote {
        let token = std::env::var(ADMIN_TOKEN_ENV)
            .map_err(|_| anyhow::anyhow!("--remote needs the admin token in {ADMIN_TOKEN_ENV}"))?;
        let remote = Remote::new(url, &token)?;
        return administer(command, &Admin::Remote(&remote), output).await;
    }
    // Outside the repository (and any Spin app's folder) the default store
    // is `./.spin`, which no server reads: never made there by surprise.
    if cli.store.store == StoreSpec::Sqlite && found == StateDir::Fallback && !sqlite_path.exists()
    {
        anyhow::bail!(
            "no store at {} and no --state-dir: give --state-dir DIR (the folder of the \
             sqlite_key_value.db the server reads), --store redis://…, or --remote URL; nothing \
             written",
            sqlite_path.display()
        );
    }
    let connect = connect_options(&cli.store)?;
    let stores = Stores::open(&cli.store.store, &rate, &sqlite_path, &connect).await?;
    let name = cli.store.store.describe(&sqlite_path);
    administer(
        command,
        &Admin::Local {
            store: &stores.default,
            name,
        },
        output,
    )
    .await
}

/// How networked stores are reached, from the flags.
fn connect_options(args: &StoreArgs) -> anyhow::Result<store::ConnectOptions> {
    Ok(store::ConnectOptions {
        deadline: Duration::from_millis(args.store_timeout_ms),
        redis_ca: match &args.redis_ca_file {
            Some(file) => Some(std::fs::read(file).map_err(|e| {
                anyhow::anyhow!("cannot read --redis-ca-file {}: {e}", file.display())
            })?),
            None => None,
        },
    })
}

/// `serve`.
async fn serve(args: ServeArgs, stores: Stores, store_line: &str) -> anyhow::Result<()> {
    let component = args.component.clone().unwrap_or_else(default_component);
    let options = serve::ServeOptions {
        listen: args.listen,
        component,
        fixed_time_ms: args.fixed_time_ms,
        reuse: args.max_instance_reuse_count,
        limits: ConnectionLimits {
            header_read_timeout: Duration::from_millis(args.header_read_timeout_ms),
            max_connections: args.max_connections as usize,
            max_age: Duration::from_millis(args.max_connection_age_ms),
            grace: Duration::from_millis(args.shutdown_timeout_ms),
        },
        // The old variable, for deployments that still set it.
        ops_listen: args.ops_listen.or(old_ops_listen()?),
        admin_token: admin_token(args.admin_token_file.as_deref())?,
    };
    // A store that does not answer now fails the start, within
    // seconds, rather than every request after it.
    stores.ping().await.context("the store does not answer")?;
    let ready = serve::start(&options).await?;
    println!("{store_line}");
    greet(&stores.default, &ready.base, args.demo_key).await?;
    serve::serve(ready, stores).await
}

/// Names the store a change was written to (stderr: stdout stays what
/// scripts read).
fn wrote(to: &Admin<'_>) {
    eprintln!("wrote to {}", to.name());
}

/// Runs one admin command on `to`.
async fn administer(command: Command, to: &Admin<'_>, output: Output) -> anyhow::Result<()> {
    let now = admin::now();
    let json = output == Output::Json;
    match command {
        Command::Serve(_) => unreachable!("serve is not an admin command"),
        Command::Keys(KeysCommand::Create {
            account,
            label,
            count,
        }) => {
            for _ in 0..count {
                let created = to.create_key(&account, &label).await?;
                admin::print_created(&created, output)?;
            }
            wrote(to);
        }
        Command::Keys(KeysCommand::List { account }) => {
            let keys = to.list_keys(account.as_deref()).await?;
            admin::print_keys(&keys, output)?;
        }
        Command::Keys(KeysCommand::Revoke { hash_prefix }) => {
            let revoked = to.revoke_key(&hash_prefix).await?;
            admin::print_revoked(&revoked, output)?;
            if !revoked.already {
                wrote(to);
            }
        }
        Command::Patterns(PatternsCommand::Add {
            account,
            pattern,
            kind,
            category,
            confidence,
            source,
            id,
            until,
        }) => {
            let new = new_pattern(pattern, &kind, category, confidence, source, id, until)?;
            let ids = to.add_patterns(&account, vec![new]).await?;
            if json {
                admin::print_json(&body::added(&ids))?;
            } else {
                println!("added {} to account {account}", ids.join(", "));
            }
            wrote(to);
        }
        Command::Patterns(PatternsCommand::List { account }) => {
            let patterns = to.list_patterns(&account).await?;
            admin::print_patterns(&patterns, output, now)?;
        }
        Command::Patterns(PatternsCommand::Remove { account, id }) => {
            to.remove_pattern(&account, &id).await?;
            if json {
                admin::print_json(&body::removed_pattern(&id))?;
            } else {
                println!("removed {id} from account {account}");
            }
            wrote(to);
        }
        Command::Report { .. } => unreachable!("run above"),
        Command::Patterns(PatternsCommand::Import { account, file }) => {
            let news = admin::read_import(&file)?;
            let count = news.len();
            let ids = to.add_patterns(&account, news).await?;
            if json {
                admin::print_json(&body::added(&ids))?;
            } else {
                println!(
                    "imported {count} patterns into account {account}: {}",
                    ids.join(", ")
                );
            }
            wrote(to);
        }
        Command::Exclusions(ExclusionsCommand::Add {
            account,
            ids,
            categories,
            tags,
            until,
        }) => {
            let news: Vec<NewExclusion> = ids
                .into_iter()
                .map(|id| NewExclusion {
                    id: Some(id),
                    until: until.clone(),
                    ..NewExclusion::default()
                })
                .chain(categories.into_iter().map(|category| NewExclusion {
                    category: Some(category),
                    until: until.clone(),
                    ..NewExclusion::default()
                }))
                .chain(tags.into_iter().map(|tag| NewExclusion {
                    tag: Some(tag),
                    until: until.clone(),
                    ..NewExclusion::default()
                }))
                .collect();
            anyhow::ensure!(
                !news.is_empty(),
                "give what to exclude: --id ID, --category CATEGORY or --tag TAG"
            );
            let added = to.add_exclusions(&account, news).await?;
            admin::print_excluded(&account, &added, output)?;
            wrote(to);
        }
        Command::Exclusions(ExclusionsCommand::List { account }) => {
            let exclusions = to.list_exclusions(&account).await?;
            admin::print_exclusions(&exclusions, output, now)?;
        }
        Command::Exclusions(ExclusionsCommand::Remove {
            account,
            id,
            category,
            tag,
        }) => {
            let (kind, value) = match (id, category, tag) {
                (Some(id), _, _) => ("id", id),
                (None, Some(category), _) => ("category", category),
                (None, None, Some(tag)) => ("tag", tag),
                (None, None, None) => {
                    anyhow::bail!("give --id ID, --category CATEGORY or --tag TAG")
                }
            };
            let removed = to.remove_exclusion(&account, kind, &value).await?;
            if json {
                admin::print_json(&body::removed_exclusion(&removed))?;
            } else {
                println!("account {account} no longer excludes {}", removed.excluded);
            }
            wrote(to);
        }
        Command::Accounts(AccountsCommand::Export { account }) => {
            let export = to.export(&account).await?;
            admin::print_export(&export)?;
        }
        Command::Accounts(AccountsCommand::Import { file }) => {
            let document =
                admin::read_bounded(&file, 2 * noise_filter_core::admin::MAX_IMPORT_BYTES)?;
            let imported = to.import(&document).await?;
            admin::print_imported(&imported, output)?;
            wrote(to);
        }
    }
    Ok(())
}

/// Says how many keys the store holds; with `demo` and none, creates a demo
/// key and shows how to use it.
async fn greet(default: &store::Backend, base: &str, demo: bool) -> anyhow::Result<()> {
    let store = Admin::Local {
        store: default,
        name: String::new(),
    };
    let keys = store.list_keys(None).await?;
    if !keys.is_empty() || !demo {
        println!(
            "{} key(s) in the store; create one with: noise-filter keys create --account NAME",
            keys.len()
        );
        return Ok(());
    }
    let created = store
        .create_key("demo", "demo")
        .await
        .context("creating the demo key")?;
    let key = created.key.as_str();
    println!(
        "first run: created a demo key for account \"demo\" (shown only now, stored as a hash):"
    );
    println!("  {key}");
    println!("try it:");
    println!("  curl -i -H 'Authorization: Bearer {key}' {base}/v1/filters");
    println!(
        "  curl -i -H 'Authorization: Bearer {key}' '{base}/api/v1/filters?categories=BOT_TRAFFIC'"
    );
    Ok(())
}

/// The pattern the flags describe, for the core to validate. Built as is
/// (not through JSON, which has no NaN or infinity: `--confidence NaN`
/// would have become an absent confidence, the default 1.0).
fn new_pattern(
    pattern: String,
    kind: &str,
    category: Option<String>,
    confidence: Option<f64>,
    source: Option<String>,
    id: Option<String>,
    until: Option<String>,
) -> anyhow::Result<NewPattern> {
    // The kind's names are the core's (its serde spelling).
    let kind: Kind = serde_json::from_value(serde_json::Value::String(kind.to_owned()))
        .map_err(|e| anyhow::anyhow!("--type {kind:?}: {e}; use string or regex"))?;
    Ok(NewPattern {
        id,
        pattern,
        kind,
        category,
        confidence,
        source,
        until,
    })
}

/// The environment variable that holds the admin token(s): the server's
/// (which turn its admin API on) and the CLI's with `--remote` (the token it
/// presents).
const ADMIN_TOKEN_ENV: &str = "NOISE_FILTER_ADMIN_TOKEN";

/// The admin tokens `serve` hands the component, from
/// `NOISE_FILTER_ADMIN_TOKEN` or `--admin-token-file` (not both), checked by
/// the core: a setting that holds no valid token stops the start, rather
/// than leave the API off by surprise. `None`: neither is set (off).
fn admin_token(file: Option<&Path>) -> anyhow::Result<Option<Arc<str>>> {
    let from_env = std::env::var(ADMIN_TOKEN_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let value = match (from_env, file) {
        (Some(_), Some(_)) => anyhow::bail!(
            "{ADMIN_TOKEN_ENV} and --admin-token-file are both set: give the admin token one way"
        ),
        (Some(value), None) => value,
        (None, Some(file)) => std::fs::read_to_string(file)
            .with_context(|| format!("cannot read --admin-token-file {}", file.display()))?,
        (None, None) => return Ok(None),
    };
    match noise_filter_core::admin_api::AdminTokens::configure(&value)? {
        Some(tokens) => {
            tracing::info!(
                tokens = %tokens.ids().join(","),
                "admin API on under /admin/v1/ (tokens named by their ids)"
            );
            Ok(Some(Arc::from(value.trim())))
        }
        None => Ok(None),
    }
}

/// `NOISE_FILTER_ADMIN_LISTEN`, the operations address's variable before
/// `NOISE_FILTER_OPS_LISTEN`.
fn old_ops_listen() -> anyhow::Result<Option<SocketAddr>> {
    match std::env::var("NOISE_FILTER_ADMIN_LISTEN") {
        Ok(address) => Ok(Some(address.parse().with_context(|| {
            format!("NOISE_FILTER_ADMIN_LISTEN={address:?} is not an address")
        })?)),
        Err(_) => Ok(None),
    }
}

/// Where the state folder came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StateDir {
    /// `--state-dir`.
    Given,
    /// Beside a `spin.toml` (the repository's `spin-app/`, or a Spin app's
    /// own folder): where `spin up` keeps its store.
    SpinApp,
    /// `./.spin`, beside nothing a server reads.
    Fallback,
}

/// `spin-app/.spin` of the repository when run inside it (so `spin up` in
/// `spin-app/` sees the same keys), `.spin` beside the `spin.toml` of a Spin
/// app's folder, else `./.spin`.
fn default_state_dir() -> (PathBuf, StateDir) {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    for dir in cwd.ancestors() {
        if dir.join("spin-app").join("spin.toml").is_file() {
            return (dir.join("spin-app").join(".spin"), StateDir::SpinApp);
        }
        if dir.join("spin.toml").is_file() {
            return (dir.join(".spin"), StateDir::SpinApp);
        }
    }
    (cwd.join(".spin"), StateDir::Fallback)
}

/// `<target>/wasm32-wasip2/component/noise_filter_spin.wasm` (the
/// `component` profile's output), where `<target>` is the folder above this
/// binary's profile folder (`<target>/server/…`, `<target>/release/…`).
/// The component's file name, beside an installed binary.
const COMPONENT_FILE: &str = "noise_filter_spin.wasm";

/// An installed copy (binary and component copied into one folder, as a
/// release archive or a container image has them) finds the file beside
/// itself; a binary in the cargo target folder finds the one the xtask
/// built there.
fn default_component() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let beside = exe.with_file_name(COMPONENT_FILE);
    if beside.is_file() {
        return beside;
    }
    component_in_target(&exe)
}

fn component_in_target(exe: &Path) -> PathBuf {
    let target = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("target"));
    target
        .join("wasm32-wasip2")
        .join("component")
        .join(COMPONENT_FILE)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    #[test]
    fn component_path_beside_the_binary() {
        assert_eq!(
            component_in_target(Path::new("/t/server/noise-filter-host")),
            Path::new("/t/wasm32-wasip2/component/noise_filter_spin.wasm")
        );
    }

    #[test]
    fn cli_parses() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from([
            "h",
            "--store",
            "redis://127.0.0.1:1",
            "patterns",
            "add",
            "--account",
            "a",
            "--pattern",
            "xyz",
        ])
        .unwrap();
        assert_eq!(
            cli.store.store,
            StoreSpec::Redis("redis://127.0.0.1:1".into())
        );
    }

    #[test]
    fn new_pattern_from_flags() {
        let p = new_pattern(
            "abc def".into(),
            "regex",
            Some("bot-traffic".into()),
            Some(0.7),
            None,
            None,
            Some("2026-12-31".into()),
        )
        .unwrap();
        assert_eq!(p.kind, noise_filter_core::Kind::Regex);
        assert_eq!(p.until.as_deref(), Some("2026-12-31"));
        assert!(new_pattern("abc".into(), "glob", None, None, None, None, None).is_err());
    }
}
