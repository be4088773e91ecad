//! `boogerd`: parse flags, set up logging, bind the socket, run until told to stop.

// Its stdout carries nothing but what a flag asks to print (`--print-config`): logs go to
// stderr, the protocols to sockets.
#![warn(clippy::print_stdout)]

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use clap::builder::BoolishValueParser;

/// The booger daemon: a warm code index and MCP server for AI coding agents.
///
/// Runs in the foreground and logs to stderr; `booger` starts it on demand, and the service
/// files in systemd/ and launchd/ keep it running.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Local socket to listen on (a named pipe on Windows).
    #[arg(long, env = "BOOGER_SOCKET")]
    socket: Option<PathBuf>,
    /// Data directory: project registry and log.
    #[arg(long, env = "BOOGER_HOME")]
    home: Option<PathBuf>,
    /// Text files larger than this many bytes are indexed as fixed-size blocks, not parsed.
    #[arg(long, env = "BOOGER_MAX_FILE_SIZE", default_value_t = boogerd::source::DEFAULT_MAX_FILE_BYTES)]
    max_file_size: u64,
    /// Directories watched at most, across projects; beyond it a project is re-walked
    /// periodically instead (default: half of fs.inotify.max_user_watches).
    #[arg(long, env = "BOOGER_MAX_WATCHES")]
    max_watches: Option<usize>,
    /// Seconds between re-walks of a project whose changes cannot all be watched.
    #[arg(long, env = "BOOGER_RESCAN_SECS", default_value_t = 60)]
    rescan_secs: u64,
    /// Do not watch files: projects are reconciled at start and by `booger index` only.
    #[arg(long, env = "BOOGER_NO_WATCH", value_parser = BoolishValueParser::new())]
    no_watch: bool,
    /// Do not compute embeddings (semantic and hybrid search then answer lexically).
    #[arg(long, env = "BOOGER_NO_EMBED", value_parser = BoolishValueParser::new())]
    no_embed: bool,
    /// Embeddings: auto (the built-in static tier, plus the transformer once
    /// `booger model install` has put it in place and boogerd has the `transformer` feature),
    /// static, minilm, ollama or openai (a service: the static tier answers until it has
    /// covered a project, and whenever it is down).
    #[arg(long, env = "BOOGER_EMBEDDER", default_value = "auto")]
    embedder: boogerd::domain::embed::provider::Choice,
    /// The embedding service's base URL (ollama: http://127.0.0.1:11434; openai: required,
    /// e.g. https://api.openai.com/v1 or http://127.0.0.1:8080).
    #[arg(long, env = "BOOGER_EMBED_URL")]
    embed_url: Option<String>,
    /// The embedding service's model (ollama: nomic-embed-text; openai: text-embedding-3-small).
    #[arg(long, env = "BOOGER_EMBED_MODEL")]
    embed_model: Option<String>,
    /// Seconds without a query after which a project's warm structures (ranking index,
    /// vectors, database connections) are released; the next query rebuilds them.
    #[arg(long, env = "BOOGER_IDLE_RELEASE_SECS", default_value_t = boogerd::engine::config::DEFAULT_IDLE_RELEASE_SECS)]
    idle_release_secs: u64,
    /// Megabytes the warm structures of all projects may hold together; past it the least
    /// recently used projects are released first.
    #[arg(long, env = "BOOGER_MEMORY_BUDGET", default_value_t = boogerd::engine::config::DEFAULT_MEMORY_BUDGET_MB)]
    memory_budget: usize,
    /// Registering a directory with more files than this to index needs `--force`
    /// (`booger projects add PATH --force`); 0 never asks.
    #[arg(long, env = "BOOGER_CONFIRM_ABOVE_FILES", default_value_t = boogerd::engine::config::DEFAULT_CONFIRM_ABOVE_FILES)]
    confirm_above_files: usize,
    /// Serve HTTP (health, metrics, status page) on this address; port 0 picks a free one.
    #[arg(long, env = "BOOGER_HTTP", default_value = boogerd::engine::config::DEFAULT_HTTP_ADDR)]
    http: std::net::SocketAddr,
    /// Serve no HTTP.
    #[arg(long, env = "BOOGER_NO_HTTP", value_parser = BoolishValueParser::new())]
    no_http: bool,
    /// Allow --http on an address that is not loopback (everything but /health still needs
    /// the token).
    #[arg(long)]
    http_allow_remote: bool,
    /// Let MCP over HTTP call the tools that change something (register, remove, index,
    /// notes); by default HTTP clients only read.
    #[arg(long)]
    http_allow_writes: bool,
    /// The team index, a PostgreSQL URL (`postgresql://user@host/db`, `?sslmode=require` for
    /// TLS; the password from the URL, `PGPASSWORD` or `~/.pgpass`): where `publish` writes,
    /// what `--team` searches and a new clone is filled from.
    #[arg(long, env = "BOOGER_TEAM_URL", global = true)]
    team_url: Option<String>,
    /// A PEM file of CA certificates the team index's server certificate may be signed by,
    /// besides the public roots (`sslmode=require`).
    #[arg(long, env = "BOOGER_TEAM_CA", global = true)]
    team_ca: Option<std::path::PathBuf>,
    /// Serve the team index (--team-url) to remote agents over MCP on this address, any
    /// interface included, instead of running a local daemon. Each agent needs a token
    /// (`booger team token add`); see the README's "Team server".
    #[arg(long, env = "BOOGER_SERVE_TEAM", value_name = "ADDR")]
    #[cfg(feature = "team")]
    serve_team: Option<std::net::SocketAddr>,
    /// An origin whose web pages may call the team server (`https://app.example`); pages
    /// of any other are refused. Repeat for more.
    #[arg(long = "team-origin", value_name = "ORIGIN")]
    #[cfg(feature = "team")]
    team_origins: Vec<String>,
    /// TLS for --serve-team: its certificate chain (PEM; with --team-key).
    #[arg(long, env = "BOOGER_TEAM_CERT", requires = "team_key", value_name = "PEM")]
    #[cfg(feature = "team")]
    team_cert: Option<PathBuf>,
    /// TLS for --serve-team: the certificate's private key (PEM).
    #[arg(long, env = "BOOGER_TEAM_KEY", requires = "team_cert", value_name = "PEM")]
    #[cfg(feature = "team")]
    team_key: Option<PathBuf>,
    /// Connections the team server keeps to the team index: calls answered at once.
    #[arg(long, default_value_t = boogerd::fronts::team::DEFAULT_CONNECTIONS)]
    #[cfg(feature = "team")]
    team_connections: u32,
    /// Print the resolved configuration as JSON and exit without starting.
    #[arg(long)]
    print_config: bool,
    #[command(subcommand)]
    #[cfg(feature = "team")]
    command: Option<Command>,
}

#[cfg(feature = "team")]
#[derive(clap::Subcommand)]
enum Command {
    /// Tokens of the team server (on the team index given by --team-url).
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
}

#[cfg(feature = "team")]
#[derive(clap::Subcommand)]
enum TokenAction {
    /// A new token for NAME (a person or a bot), printed once; only its hash is kept.
    Add {
        name: String,
        /// Repositories it may read: names as published, `*` and `?` as wildcards
        /// (`acme/*`); at least one.
        #[arg(long, num_args = 1.., required = true)]
        repos: Vec<String>,
        /// Calls a minute it may make.
        #[arg(long, default_value_t = 600)]
        rate: u32,
    },
    /// Revokes NAME's token: refused from the next second on.
    Revoke { name: String },
    /// Every token: name, repositories, rate, created, revoked (never a secret).
    List {
        #[arg(long)]
        json: bool,
    },
}

fn main() -> std::process::ExitCode {
    // An error is a message, not a stack trace (`main` returning one prints the trace under
    // RUST_BACKTRACE=1): what went wrong and what to do are in its context.
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("boogerd: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    boogerd::base::memory::configure_allocator();
    let args = Args::parse();
    // Everything boogerd creates (indexes, logs, models) holds text of the user's files:
    // private to the user, whatever the shell's umask.
    #[cfg(unix)]
    // SAFETY: umask only sets this process's file-creation mask.
    unsafe {
        libc::umask(0o077);
    }
    boogerd::base::memory::raise_open_files_limit();
    let config = config(&args)?;
    #[cfg(feature = "team")]
    if let Some(Command::Token { action }) = args.command {
        let url = config.team_url.clone().context("no team index: pass --team-url or set BOOGER_TEAM_URL")?;
        return token_command(&url, action);
    }
    if args.print_config {
        print_config(&config);
        return Ok(());
    }
    tracing_subscriber::fmt()
        .with_env_filter(log_filter(std::env::var(booger_proto::paths::LOG_ENV).ok().as_deref()))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();

    // Tool calls run on blocking threads; a burst of them queues instead of growing the
    // daemon by a thread (and its stack and buffers) per call.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(16)
        .enable_all()
        .build()
        .context("cannot start tokio")?;
    #[cfg(feature = "team")]
    let result = match args.serve_team {
        Some(addr) => runtime.block_on(serve_team(addr, args, config)),
        None => runtime.block_on(serve_local(config)),
    };
    #[cfg(not(feature = "team"))]
    let result = runtime.block_on(serve_local(config));
    // A handler still running (a scan past its deadline) must not keep the process alive:
    // the index is safe at any instant (SQLite's WAL), so exit rather than wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    result
}

/// The daemon's configuration: the environment's, then the flags'.
fn config(args: &Args) -> anyhow::Result<boogerd::engine::Config> {
    let mut config = boogerd::engine::Config::from_env();
    if let Some(s) = &args.socket {
        config.socket = s.clone();
    }
    if let Some(h) = &args.home {
        config.data_dir = h.clone();
    }
    config.max_file_bytes = args.max_file_size;
    if let Some(n) = args.max_watches {
        config.max_watches = n;
    }
    config.watch = !args.no_watch;
    config.embed = !args.no_embed;
    config.embedder = boogerd::domain::embed::provider::Settings {
        choice: args.embedder,
        url: args.embed_url.clone(),
        model: args.embed_model.clone(),
        // From the environment only, so a key never shows in `ps`.
        api_key: ["BOOGER_EMBED_API_KEY", "OPENAI_API_KEY"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty())),
    };
    config.watch_timing.rescan = std::time::Duration::from_secs(args.rescan_secs.max(1));
    config.idle_release = std::time::Duration::from_secs(args.idle_release_secs.max(1));
    config.memory_budget = args.memory_budget.saturating_mul(1 << 20);
    config.confirm_above_files = args.confirm_above_files;
    config.http = (!args.no_http).then_some(args.http);
    config.http_allow_remote = args.http_allow_remote;
    config.http_allow_writes = args.http_allow_writes;
    // The local daemon keeps the team URL it is given for its next start; a token command
    // and the team server use it without keeping it.
    #[cfg(feature = "team")]
    {
        let keep_team_url = args.command.is_none() && args.serve_team.is_none() && !args.print_config;
        config.settle_team_url(args.team_url.clone(), keep_team_url).context("cannot keep the team URL")?;
        if let Some(ca) = &args.team_ca {
            boogerd::store::team::trust_ca(ca.clone());
        }
    }
    #[cfg(not(feature = "team"))]
    {
        if args.team_url.is_some() || args.team_ca.is_some() {
            anyhow::bail!(
                "this boogerd was built without the team index (cargo feature `team`): --team-url and --team-ca need it"
            );
        }
        config.team_url = None;
    }
    Ok(config)
}

#[allow(clippy::print_stdout)]
fn print_config(config: &boogerd::engine::Config) {
    println!(
        "{}",
        serde_json::json!({
            "socket": config.socket,
            "data_dir": config.data_dir,
            "max_file_size": config.max_file_bytes,
            "max_watches": config.max_watches,
            "rescan_secs": config.watch_timing.rescan.as_secs(),
            "watch": config.watch,
            "embed": config.embed,
            "embedder": config.embedder.choice.as_str(),
            "embed_url": config.embedder.url,
            "embed_model": config.embedder.model,
            "idle_release_secs": config.idle_release.as_secs(),
            "memory_budget_mb": config.memory_budget >> 20,
            "confirm_above_files": config.confirm_above_files,
            "http": config.http,
            "team": team_server(config),
        })
    );
}

/// The team index's server as `--print-config` shows it (no user or password).
fn team_server(config: &boogerd::engine::Config) -> Option<String> {
    #[cfg(feature = "team")]
    return config.team_url.as_deref().map(boogerd::store::team::server_of);
    #[cfg(not(feature = "team"))]
    return config.team_url.clone();
}

/// `--serve-team ADDR`: the team server, until a signal.
#[cfg(feature = "team")]
async fn serve_team(addr: std::net::SocketAddr, args: Args, config: boogerd::engine::Config) -> anyhow::Result<()> {
    let url = config.team_url.clone().context("--serve-team serves the team index: pass --team-url too")?;
    let options = boogerd::fronts::team::Options {
        addr,
        url,
        origins: args.team_origins,
        connections: args.team_connections,
        tls: args.team_cert.zip(args.team_key),
        // From the environment only, so the secret never shows in `ps`.
        metrics_token: std::env::var("BOOGER_TEAM_METRICS_TOKEN").ok().filter(|t| !t.is_empty()),
    };
    let (_, served) = boogerd::fronts::team::serve(options, shutdown_signal()).await?;
    served.await.context("the team server stopped")?;
    Ok(())
}

/// The local daemon on its socket (and HTTP), until a signal or `shutdown`.
async fn serve_local(config: boogerd::engine::Config) -> anyhow::Result<()> {
    // Signal handlers go in before the socket exists: a client that can connect can also
    // stop the daemon gracefully.
    let shutdown = shutdown_signal();
    let endpoint = match boogerd::fronts::Endpoint::bind(&config.socket, &config.data_dir) {
        Ok(e) => e,
        // Another daemon already serves what was asked: that is the state a service manager
        // wants, not a failure to restart in a loop (systemd's Restart=on-failure, launchd's
        // KeepAlive on unsuccessful exit), nor a client's start race lost.
        Err(e) if e.is_already_served() => {
            tracing::warn!("{e}; this one exits");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    boogerd::run(config, endpoint, shutdown).await
}

/// `boogerd token …`: what it prints is for people, but `list --json` and the secret alone
/// on stdout are for scripts.
#[cfg(feature = "team")]
#[allow(clippy::print_stdout)]
fn token_command(url: &str, action: TokenAction) -> anyhow::Result<()> {
    let mut team = boogerd::store::team::TeamStore::connect(url)?;
    match action {
        TokenAction::Add { name, repos, rate } => {
            let secret = format!("bgt_{}", boogerd::base::secret::new_token());
            team.add_token(&name, &repos, rate, &secret).map_err(|e| match e.to_string().contains("23505") {
                true => anyhow::anyhow!("{name} has a live token: revoke it first to make a new one"),
                false => e.into(),
            })?;
            eprintln!(
                "token for {name} (repositories {}; {rate} calls a minute); shown once, keep it:",
                repos.join(" ")
            );
            println!("{secret}");
        }
        TokenAction::Revoke { name } => {
            if !team.revoke_token(&name)? {
                anyhow::bail!("{name} has no live token (`booger team token list` shows them)");
            }
            eprintln!("revoked {name}'s token");
        }
        TokenAction::List { json } => {
            let tokens = team.tokens()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tokens)?);
            }
            for t in tokens.iter().filter(|_| !json) {
                let state = t.revoked.as_deref().map_or("live".to_owned(), |r| format!("revoked {r}"));
                println!("{}\t{}\t{}/min\tcreated {}\t{state}", t.name, t.repos.join(" "), t.per_minute, t.created);
            }
        }
    }
    Ok(())
}

/// Installs the handlers now; the future resolves on SIGINT or SIGTERM (Ctrl-C on Windows).
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
        async move {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM received"),
                _ = int.recv() => tracing::info!("SIGINT received"),
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// The daemon's log filter from what `BOOGER_LOG` asks (`info` when unset or unreadable).
/// The PostgreSQL client logs every statement with its parameters at `debug`: a file's
/// chunks and a prebuilt index's megabyte parts, escaped. Under `BOOGER_LOG=debug` a publish
/// of a 27,000-file tree wrote 3.9 GB of log and ran several times slower; so that client
/// stays at `info` unless it is named.
fn log_filter(asked: Option<&str>) -> tracing_subscriber::EnvFilter {
    let asked = asked.unwrap_or("info");
    let directives =
        if asked.contains("tokio_postgres") { asked.to_owned() } else { format!("{asked},tokio_postgres=info") };
    tracing_subscriber::EnvFilter::try_new(directives).unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
}
