//! The `tessera` binary: read the configuration, build the application, serve until a signal;
//! or, as `tessera eval`, measure the configured model on the scenario set; or, as
//! `tessera backup FILE` / `tessera restore FILE`, copy the SQLite database out or back.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use tessera::{
    agent::AllowedModels,
    chat::{sites::load_sites, Manifest},
    config::{self, help_text, Config, DatabaseUrl},
    eval::{EvalOptions, USAGE as EVAL_USAGE},
    startup::{shutdown_signal, Application, Options},
    store::{sqlite_file, StoreError},
    telemetry,
    workflow::yaml::{load_dir, YamlWorkflow},
};
use tokio_util::sync::CancellationToken;

#[tokio::main]
#[expect(clippy::print_stdout, reason = "--help and --version answer on stdout")]
async fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    match arguments.first().map(String::as_str) {
        Some("--help" | "-h") => {
            print!("{}", help_text());
            return ExitCode::SUCCESS;
        }
        Some("--version" | "-V") => {
            println!("tessera {}", tessera::VERSION);
            return ExitCode::SUCCESS;
        }
        Some("eval") => return eval(&arguments[1..]).await,
        Some("backup") => return backup(&arguments[1..]).await,
        Some("restore") => return restore(&arguments[1..]).await,
        Some(other) => {
            eprintln!("tessera: unknown argument `{other}`; the commands are eval, backup and restore, and settings come from the environment or tessera.toml (see --help)");
            return ExitCode::from(2);
        }
        None => {}
    }
    let config =
        match config::sources_from_process().and_then(|sources| Config::from_sources(&sources)) {
            Ok(config) => config,
            Err(error) => {
                eprintln!("tessera: {error}");
                return ExitCode::from(2);
            }
        };
    // A bad workflow file is a bad configuration: one line naming file, step and field.
    let yaml_workflows = match config.workflows_dir.as_deref().map(load_dir).transpose() {
        Ok(workflows) => workflows.unwrap_or_default(),
        Err(error) => {
            eprintln!("tessera: {error}");
            return ExitCode::from(2);
        }
    };
    // A bad site file too: one line naming the file and the field.
    let sites = match load_sites(&config.sites, &|name| std::env::var_os(name).is_some()) {
        Ok(sites) => sites,
        Err(error) => {
            eprintln!("tessera: {error}");
            return ExitCode::from(2);
        }
    };
    telemetry::init(&config.log, config.log_format);
    match serve(config, yaml_workflows, sites).await {
        Ok(()) => ExitCode::SUCCESS,
        // Like a bad setting: the operator picked the wrong binary for this database.
        Err(error) => match error.downcast_ref::<StoreError>() {
            Some(newer @ StoreError::NewerDatabase { .. }) => {
                eprintln!("tessera: {newer}");
                ExitCode::from(2)
            }
            _ => {
                eprintln!("tessera: {error:#}");
                ExitCode::FAILURE
            }
        },
    }
}

/// `tessera eval`: the configured model (or replayed transcripts) on the scenario set; exits 1
/// only when the evaluation itself fails or a case got no page at all, never for a weak model.
#[expect(clippy::print_stdout, reason = "the report is the command's output")]
async fn eval(arguments: &[String]) -> ExitCode {
    if arguments
        .iter()
        .any(|argument| argument == "--help" || argument == "-h")
    {
        print!("{EVAL_USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match EvalOptions::parse(arguments) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("tessera eval: {error}");
            return ExitCode::from(2);
        }
    };
    let config =
        match config::sources_from_process().and_then(|sources| Config::from_sources(&sources)) {
            Ok(config) => config,
            Err(error) => {
                eprintln!("tessera eval: {error}");
                return ExitCode::from(2);
            }
        };
    let models = match AllowedModels::from_spec(&config.model, &config.model_settings) {
        Ok(models) => models,
        Err(error) => {
            eprintln!("tessera eval: {error}");
            return ExitCode::from(2);
        }
    };
    let Ok(model) = models.choose(None) else {
        eprintln!("tessera eval: no model is configured");
        return ExitCode::from(2);
    };
    match tessera::eval::run(&options, model, models.configured_spec()).await {
        Ok(report) => {
            if options.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).unwrap_or_default()
                );
            } else {
                print!("{}", report.render());
            }
            if report.any_failed() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(error) => {
            eprintln!("tessera eval: {error}");
            ExitCode::FAILURE
        }
    }
}

const BACKUP_USAGE: &str = "\
usage: tessera backup FILE
Copies the SQLite database named by DATABASE_URL (or tessera.toml) into the new file FILE,
consistent as of one moment, while servers keep running. PostgreSQL: use pg_dump.
";

const RESTORE_USAGE: &str = "\
usage: tessera restore FILE
Checks the backup FILE and puts it in place of the SQLite database named by DATABASE_URL; refused
while a server runs on that database. The replaced database is kept beside it as
<database>.before-restore-<unix seconds>. PostgreSQL: use pg_restore (or psql for a plain dump).
";

/// `tessera backup FILE`.
#[expect(
    clippy::print_stdout,
    reason = "usage and the result are the command's output"
)]
async fn backup(arguments: &[String]) -> ExitCode {
    let into = match file_argument("backup", BACKUP_USAGE, arguments) {
        Ok(into) => into,
        Err(code) => return code,
    };
    let database = match sqlite_database("backup", "pg_dump") {
        Ok(database) => database,
        Err(code) => return code,
    };
    match sqlite_file::backup(&database, &into).await {
        Ok(bytes) => {
            println!(
                "tessera backup: {} copied to {} ({bytes} bytes, checked)",
                database.display(),
                into.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tessera backup: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `tessera restore FILE`.
#[expect(
    clippy::print_stdout,
    reason = "usage and the result are the command's output"
)]
async fn restore(arguments: &[String]) -> ExitCode {
    let from = match file_argument("restore", RESTORE_USAGE, arguments) {
        Ok(from) => from,
        Err(code) => return code,
    };
    let database = match sqlite_database("restore", "pg_restore") {
        Ok(database) => database,
        Err(code) => return code,
    };
    match sqlite_file::restore(&from, &database).await {
        Ok(restored) => {
            println!(
                "tessera restore: {} restored from {}",
                database.display(),
                from.display()
            );
            if let Some(previous) = restored.previous {
                println!(
                    "tessera restore: the replaced database is kept as {}",
                    previous.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tessera restore: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The one FILE argument of `backup` and `restore`, or the exit code after usage or an error.
#[expect(clippy::print_stdout, reason = "--help answers on stdout")]
fn file_argument(command: &str, usage: &str, arguments: &[String]) -> Result<PathBuf, ExitCode> {
    match arguments {
        [flag] if flag == "--help" || flag == "-h" => {
            print!("{usage}");
            Err(ExitCode::SUCCESS)
        }
        [file] if !file.starts_with('-') => Ok(PathBuf::from(file)),
        _ => {
            eprint!("tessera {command}: expected one FILE\n{usage}");
            Err(ExitCode::from(2))
        }
    }
}

/// The SQLite file the configuration names; for PostgreSQL, one line pointing to its own tool.
fn sqlite_database(command: &str, postgres_tool: &str) -> Result<PathBuf, ExitCode> {
    let config = config::sources_from_process()
        .and_then(|sources| Config::from_sources(&sources))
        .map_err(|error| {
            eprintln!("tessera {command}: {error}");
            ExitCode::from(2)
        })?;
    match config.database_url {
        DatabaseUrl::Sqlite(path) => Ok(Path::new(&path).to_owned()),
        DatabaseUrl::Postgres(_) => {
            eprintln!("tessera {command}: DATABASE_URL is PostgreSQL; use {postgres_tool} (see README, Deploying)");
            Err(ExitCode::from(2))
        }
    }
}

async fn serve(
    config: Config,
    yaml_workflows: Vec<YamlWorkflow>,
    sites: Vec<Manifest>,
) -> anyhow::Result<()> {
    let signal = shutdown_signal();
    let options = Options {
        yaml_workflows: Some(yaml_workflows),
        sites: Some(sites),
        ..Options::default()
    };
    let application = Application::build_with(config, options).await?;
    if let Some(token) = &application.generated_api_token {
        // Printed once, on the start that generated it; only its hash is stored.
        eprintln!(
            "tessera: generated API token (shown once, store it now): {}",
            token.expose()
        );
    }
    if let Some(password) = &application.generated_admin_password {
        eprintln!(
            "tessera: generated admin password for /login (shown once, store it now): {}",
            password.expose()
        );
    }
    tracing::info!(addr = %application.local_addr()?, "listening");
    let shutdown = CancellationToken::new();
    let signal_token = shutdown.clone();
    tokio::spawn(async move {
        signal.await;
        tracing::info!("shutting down");
        signal_token.cancel();
    });
    application.run_until(shutdown).await
}
