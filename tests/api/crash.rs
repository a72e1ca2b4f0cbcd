//! The crash test (issue 6): the real `tessera` binary is killed with SIGKILL at chosen moments
//! (a random instant, mid-step, during page generation, right after a submission was accepted)
//! while runs of the `crash-drill` workflow are started and their pages submitted over HTTP, and
//! restarted each time. At the end every accepted submission is stored and its run resumed with
//! exactly that typed response, every run succeeded with one output per step, and (from the
//! drill log the binary appends to) no step ran twice at the same time. SQLite with one process;
//! PostgreSQL with two processes sharing the database.
//!
//! The seed is printed; `TESSERA_CRASH_SEED=<n>` replays the same choices (the timing of a
//! real machine still varies). `crash::yaml` is a reduced drill for a YAML workflow.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use rand::{rngs::StdRng, Rng as _, SeedableRng as _};
use serde_json::{json, Value};
use tessera::demo::drill::DrillEvent;
use tokio::sync::broadcast;

use crate::helpers::{csrf_of, restartable_port, FreshPostgres, TestApp, API_TOKEN};

mod timers;
mod yaml;

const BINARY: &str = env!("CARGO_BIN_EXE_tessera");

/// Kill events per backend (on PostgreSQL some kill both processes, so kills ≥ events).
const KILL_EVENTS: usize = 20;
/// How long a killed process's runs wait before another runner may take them. A runner drops
/// its step half a lease before the lease runs out, so a process starved of the CPU for longer
/// than that (a loaded 2-core machine building beside the drill) is outside what a lease can
/// promise (ARCHITECTURE invariant 4); 3 s leaves 1.5 s of margin.
const LEASE_SECS: &str = "3";
/// How long each code step of the drill works.
const STEP_MS: u64 = 250;
/// Rows in each drill page's data: enough that generating the page takes a while.
const ROWS: u64 = 300;
/// A new run is started this often during the kill phase.
const START_EVERY: Duration = Duration::from_millis(400);
/// The longest the runs may take to finish after the last kill.
const DRAIN_DEADLINE: Duration = Duration::from_secs(45);

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// The server processes; dropping it kills every one still alive (also when a test panics).
struct Fleet {
    /// A copy of the binary: the shared target directory's one may be rebuilt during the drill.
    binary: PathBuf,
    dir: PathBuf,
    database_url: String,
    drill_log: PathBuf,
    slots: Vec<Slot>,
}

struct Slot {
    port: u16,
    child: Option<Child>,
}

/// A process killed by the drill: when it was certainly dead.
#[derive(Clone, Debug)]
struct Kill {
    pid: u32,
    dead_at_ms: i64,
    moment: Moment,
}

/// Starts `command`, waiting out "text file busy". The binary copy was written by this test
/// process, and a child another test forks in the meantime holds the copy's write descriptor
/// until it execs; exec of a file open for writing fails until then, a matter of milliseconds.
#[expect(
    clippy::disallowed_methods,
    reason = "called under the fleet's lock, which cannot be held across an await; a busy file clears in milliseconds, and the wait gives up after 100 tries of 20 ms"
)]
fn spawn_when_written(command: &mut Command) -> std::io::Result<Child> {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Err(error)
                if error.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 100 =>
            {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

impl Fleet {
    fn spawn(&mut self, slot: usize) -> anyhow::Result<u32> {
        let port = self.slots[slot].port;
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("server-{slot}.log")))?;
        let mut command = Command::new(&self.binary);
        command
            .current_dir(&self.dir)
            .env_clear()
            .env("TESSERA_ADDR", format!("127.0.0.1:{port}"))
            .env("TESSERA_PUBLIC_URL", format!("http://127.0.0.1:{port}"))
            .env("DATABASE_URL", &self.database_url)
            .env("TESSERA_API_TOKEN", API_TOKEN)
            .env("TESSERA_RUNNER_LEASE_SECS", LEASE_SECS)
            .env("TESSERA_DRILL_LOG", &self.drill_log)
            .env("TESSERA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log);
        let child = spawn_when_written(&mut command).context("starting the tessera binary")?;
        let pid = child.id();
        self.slots[slot].child = Some(child);
        Ok(pid)
    }

    /// The last lines the server in `slot` wrote, for a failure message.
    fn log_tail(&self, slot: usize) -> String {
        let text = std::fs::read_to_string(self.dir.join(format!("server-{slot}.log")))
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    fn pid(&self, slot: usize) -> Option<u32> {
        self.slots[slot].child.as_ref().map(Child::id)
    }

    /// SIGKILL, then reap: once this returns the process runs nothing.
    fn kill(&mut self, slot: usize, moment: Moment) -> anyhow::Result<Option<Kill>> {
        let Some(mut child) = self.slots[slot].child.take() else {
            return Ok(None);
        };
        let pid = child.id();
        child.kill()?;
        child.wait()?;
        Ok(Some(Kill {
            pid,
            dead_at_ms: now_ms(),
            moment,
        }))
    }

    fn exited(&mut self, slot: usize) -> Option<std::process::ExitStatus> {
        self.slots[slot]
            .child
            .as_mut()
            .and_then(|child| child.try_wait().ok().flatten())
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            if let Some(mut child) = slot.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Where the killer strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Moment {
    /// A random instant.
    Random,
    /// While a code step runs on the target.
    MidStep,
    /// While the target generates a page.
    DuringGeneration,
    /// Right after the target answered a submission with 303.
    AfterSubmit,
}

const MOMENTS: [Moment; 4] = [
    Moment::Random,
    Moment::MidStep,
    Moment::DuringGeneration,
    Moment::AfterSubmit,
];

/// What the drivers and the killer share.
struct Drill {
    client: reqwest::Client,
    ports: Vec<u16>,
    fleet: Arc<Mutex<Fleet>>,
    drill_log: PathBuf,
    /// Slots that just answered a submission with 303.
    accepted: broadcast::Sender<usize>,
    seed: u64,
    /// Set after the last kill: drivers give up past it (and their runs count as stuck).
    deadline: Mutex<Option<Instant>>,
}

/// One run as its driver saw it.
#[derive(Debug, Default)]
struct Driven {
    id: String,
    tag: String,
    answer: String,
    amount: i64,
    /// Starts whose answer was lost to a kill (a new tag was used for the next try).
    starts_lost: usize,
    accepted: usize,
    accepted_at_ms: Option<i64>,
    conflicts: usize,
    posts_lost: usize,
    duplicate_pairs: usize,
    unexpected: Vec<String>,
    finished: bool,
}

fn lock(fleet: &Mutex<Fleet>) -> std::sync::MutexGuard<'_, Fleet> {
    fleet
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drill {
    fn url(&self, slot: usize, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.ports[slot])
    }

    async fn wait_ready(&self, slot: usize) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if let Some(status) = lock(&self.fleet).exited(slot) {
                bail!(
                    "server {slot} exited during start: {status}; its log ends:\n{}",
                    lock(&self.fleet).log_tail(slot)
                );
            }
            if let Ok(response) = self.client.get(self.url(slot, "/readyz")).send().await {
                if response.status() == 200 {
                    return Ok(());
                }
            }
            if started.elapsed() > Duration::from_secs(30) {
                bail!(
                    "server {slot} never became ready; its log ends:\n{}",
                    lock(&self.fleet).log_tail(slot)
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Sends to a random process; a refused connection (that process is down) tries the others.
    /// `Err` when no process took the request, or it was lost half-way (outcome unknown).
    async fn send(
        &self,
        rng: &mut StdRng,
        request: impl Fn(&str) -> reqwest::RequestBuilder,
    ) -> (usize, reqwest::Result<reqwest::Response>) {
        let slots = self.ports.len();
        let first = rng.gen_range(0..slots);
        let mut outcome = (first, request(&self.url(first, "")).send().await);
        for offset in 1..slots {
            if !matches!(&outcome.1, Err(error) if error.is_connect()) {
                break;
            }
            let slot = (first + offset) % slots;
            outcome = (slot, request(&self.url(slot, "")).send().await);
        }
        outcome
    }

    async fn run_json(&self, rng: &mut StdRng, id: &str) -> Option<Value> {
        let (_, response) = self
            .send(rng, |base| {
                self.client
                    .get(format!("{base}/api/runs/{id}"))
                    .bearer_auth(API_TOKEN)
            })
            .await;
        let response = response.ok()?;
        if response.status() != 200 {
            return None;
        }
        response.json().await.ok()
    }

    /// A working link to the page run `id` waits on: a fresh one each time, since only tokens'
    /// hashes are stored (`None` when the run waits on no open page, or the process went away).
    async fn working_link(&self, rng: &mut StdRng, id: &str) -> Option<String> {
        let (_, response) = self
            .send(rng, |base| {
                self.client
                    .post(format!("{base}/api/runs/{id}/link"))
                    .bearer_auth(API_TOKEN)
            })
            .await;
        let response = response.ok()?;
        if response.status() != 201 {
            return None;
        }
        let body: Value = response.json().await.ok()?;
        body["link"].as_str().map(str::to_owned)
    }

    async fn start(&self, rng: &mut StdRng, driven: &mut Driven, index: usize) {
        loop {
            driven.tag = format!("run{index}-try{}", driven.starts_lost);
            let input = json!({"tag": driven.tag, "step_ms": STEP_MS, "rows": ROWS});
            let (_, response) = self
                .send(rng, |base| {
                    self.client
                        .post(format!("{base}/api/runs"))
                        .bearer_auth(API_TOKEN)
                        .json(&json!({"workflow": "crash-drill", "input": input}))
                })
                .await;
            match response {
                Ok(response) if response.status() == 201 => {
                    if let Ok(body) = response.json::<Value>().await {
                        if let Some(id) = body["id"].as_str() {
                            driven.id = id.to_owned();
                            return;
                        }
                    }
                    // The run exists but its answer was cut: it is found by the final listing.
                    driven.starts_lost += 1;
                }
                Ok(response) => {
                    driven
                        .unexpected
                        .push(format!("start answered {}", response.status()));
                    return;
                }
                Err(_) => {
                    driven.starts_lost += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// GETs the page, then POSTs the answer (sometimes twice at once).
    async fn submit(&self, rng: &mut StdRng, driven: &mut Driven, link: &str) {
        let Some(path) = link
            .split_once("/p/")
            .map(|(_, token)| format!("/p/{token}"))
        else {
            driven.unexpected.push(format!("odd link {link}"));
            return;
        };
        let (_, page) = self
            .send(rng, |base| self.client.get(format!("{base}{path}")))
            .await;
        let Ok(page) = page else { return };
        if page.status() != 200 {
            // A page submitted a moment ago shows its receipt (409 on POST); polling goes on.
            return;
        }
        let Ok(html) = page.text().await else { return };
        let csrf = csrf_of(&html);
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("_csrf", &csrf)
            .append_pair("answer", &driven.answer)
            .append_pair("amount", &driven.amount.to_string())
            .finish();
        let post = |rng: &mut StdRng| {
            let body = body.clone();
            let path = path.clone();
            let mut rng = StdRng::seed_from_u64(rng.gen());
            async move {
                self.send(&mut rng, |base| {
                    self.client
                        .post(format!("{base}{path}"))
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(body.clone())
                })
                .await
            }
        };
        let twice = rng.gen_bool(0.2);
        let outcomes = if twice {
            let (first, second) = tokio::join!(post(rng), post(rng));
            vec![first, second]
        } else {
            vec![post(rng).await]
        };
        let mut accepted_now = 0;
        for (slot, outcome) in outcomes {
            match outcome.map(|response| response.status().as_u16()) {
                Ok(303) => {
                    accepted_now += 1;
                    driven.accepted += 1;
                    driven.accepted_at_ms.get_or_insert_with(now_ms);
                    let _ = self.accepted.send(slot);
                }
                Ok(409) => driven.conflicts += 1,
                Ok(status) => driven
                    .unexpected
                    .push(format!("POST {path} answered {status}")),
                Err(_) => driven.posts_lost += 1,
            }
        }
        if twice {
            driven.duplicate_pairs += 1;
        }
        if accepted_now > 1 {
            driven
                .unexpected
                .push("two concurrent POSTs were both accepted".into());
        }
    }

    fn past_deadline(&self) -> bool {
        self.deadline
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|deadline| Instant::now() > deadline)
    }

    /// Drives one run until it succeeded, failed or the deadline passed.
    async fn drive(&self, mut rng: StdRng, mut driven: Driven) -> Driven {
        while !self.past_deadline() {
            let Some(run) = self.run_json(&mut rng, &driven.id).await else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            match run["status"].as_str() {
                Some("succeeded") => {
                    driven.finished = true;
                    return driven;
                }
                Some(status @ ("failed" | "cancelled")) => {
                    driven
                        .unexpected
                        .push(format!("run {status}: {}", run["error"]));
                    return driven;
                }
                Some("waiting") if run["waiting_page"].is_string() => {
                    if let Some(link) = self.working_link(&mut rng, &driven.id).await {
                        self.submit(&mut rng, &mut driven, &link).await;
                    }
                }
                _ => {}
            }
            let pause = rng.gen_range(150..300);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
        driven
    }
}

/// One execution of a step, from the drill log.
#[derive(Clone, Debug)]
struct Execution {
    tag: String,
    step: String,
    pid: u32,
    start: i64,
    end: i64,
    /// No `end`/`dropped` line (yet).
    unfinished: bool,
    /// Ended by a SIGKILL.
    killed: bool,
}

fn read_events(path: &Path) -> anyhow::Result<Vec<DrillEvent>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// Pairs each `start` with the next `end`/`dropped` of the same tag, step and process; a start
/// left open ends when its process was killed (or now, for a live one).
fn executions(events: &[DrillEvent], kills: &[Kill]) -> Vec<Execution> {
    let mut open: BTreeMap<(String, String, u32), Vec<i64>> = BTreeMap::new();
    let mut done = Vec::new();
    for event in events {
        let key = (event.tag.clone(), event.step.clone(), event.pid);
        match event.event.as_str() {
            "start" => open.entry(key).or_default().push(event.at_ms),
            _ => {
                if let Some(start) = open
                    .get_mut(&key)
                    .and_then(|starts| (!starts.is_empty()).then(|| starts.remove(0)))
                {
                    done.push(Execution {
                        tag: key.0,
                        step: key.1,
                        pid: key.2,
                        start,
                        end: event.at_ms,
                        unfinished: false,
                        killed: false,
                    });
                }
            }
        }
    }
    for ((tag, step, pid), starts) in open {
        let killed_at = kills
            .iter()
            .find(|kill| kill.pid == pid)
            .map(|kill| kill.dead_at_ms);
        for start in starts {
            done.push(Execution {
                tag: tag.clone(),
                step: step.clone(),
                pid,
                start,
                end: killed_at.unwrap_or_else(now_ms),
                unfinished: true,
                killed: killed_at.is_some(),
            });
        }
    }
    done
}

/// Pairs of executions of the same run and step that overlapped in time.
fn overlaps(executions: &[Execution]) -> Vec<(Execution, Execution)> {
    let mut by_step: BTreeMap<(&str, &str), Vec<&Execution>> = BTreeMap::new();
    for execution in executions {
        by_step
            .entry((&execution.tag, &execution.step))
            .or_default()
            .push(execution);
    }
    let mut found = Vec::new();
    for list in by_step.values_mut() {
        list.sort_by_key(|execution| execution.start);
        for (index, first) in list.iter().enumerate() {
            for second in &list[index + 1..] {
                if second.start < first.end {
                    found.push(((*first).clone(), (*second).clone()));
                }
            }
        }
    }
    found
}

/// Waits for the moment, then kills; returns the kills made.
async fn strike(drill: &Drill, rng: &mut StdRng, both: bool) -> anyhow::Result<Vec<Kill>> {
    let moment = MOMENTS[rng.gen_range(0..MOMENTS.len())];
    let slots = drill.ports.len();
    let mut target = rng.gen_range(0..slots);
    let give_up = Instant::now() + Duration::from_secs(4);
    match moment {
        Moment::Random => {
            let pause = rng.gen_range(300..1800);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
        Moment::AfterSubmit => {
            let mut accepted = drill.accepted.subscribe();
            if let Ok(Ok(slot)) = tokio::time::timeout_at(give_up.into(), accepted.recv()).await {
                target = slot;
            }
        }
        Moment::MidStep | Moment::DuringGeneration => {
            let pid = lock(&drill.fleet).pid(target);
            let wanted = |step: &str| {
                if moment == Moment::DuringGeneration {
                    step == "Ask"
                } else {
                    step != "Ask"
                }
            };
            while Instant::now() < give_up {
                let events = read_events(&drill.drill_log)?;
                let busy = executions(&events, &[]).into_iter().any(|execution| {
                    Some(execution.pid) == pid && execution.unfinished && wanted(&execution.step)
                });
                if busy {
                    if moment == Moment::MidStep {
                        let pause = rng.gen_range(0..STEP_MS / 2);
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                    }
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    let targets: Vec<usize> = if both {
        (0..slots).collect()
    } else {
        vec![target]
    };
    let mut kills = Vec::new();
    for slot in &targets {
        if let Some(kill) = lock(&drill.fleet).kill(*slot, moment)? {
            kills.push(kill);
        }
    }
    let pause = rng.gen_range(0..300);
    tokio::time::sleep(Duration::from_millis(pause)).await;
    for slot in targets {
        lock(&drill.fleet).spawn(slot)?;
        drill.wait_ready(slot).await?;
    }
    Ok(kills)
}

/// The whole drill on one database with `processes` servers.
/// The seed of `drill`'s random choices: `TESSERA_CRASH_SEED` when it is set, to replay a failed
/// run, else a fresh one, printed so that a failure can be replayed.
fn crash_seed(drill: &str) -> u64 {
    let seed = std::env::var("TESSERA_CRASH_SEED")
        .ok()
        .and_then(|raw| raw.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("{drill}: seed {seed} (TESSERA_CRASH_SEED={seed} replays it)");
    seed
}

async fn crash_drill(backend: &str, database_url: String, processes: usize) -> anyhow::Result<()> {
    let started = Instant::now();
    let seed = crash_seed(&format!("crash drill on {backend}"));
    let dir = tempfile::tempdir()?;
    let drill_log = dir.path().join("drill.log");
    let ports = (0..processes)
        .map(|_| restartable_port())
        .collect::<anyhow::Result<Vec<_>>>()?;
    let binary = dir.path().join("tessera");
    std::fs::copy(BINARY, &binary).context("copying the tessera binary")?;
    let fleet = Arc::new(Mutex::new(Fleet {
        binary,
        dir: dir.path().to_owned(),
        database_url,
        drill_log: drill_log.clone(),
        slots: ports
            .iter()
            .map(|port| Slot {
                port: *port,
                child: None,
            })
            .collect(),
    }));
    let drill = Arc::new(Drill {
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(15))
            .build()?,
        ports,
        fleet: Arc::clone(&fleet),
        drill_log: drill_log.clone(),
        accepted: broadcast::channel(64).0,
        seed,
        deadline: Mutex::new(None),
    });
    // One at a time: the first start migrates the database and settles the generated secrets.
    for slot in 0..processes {
        lock(&fleet).spawn(slot)?;
        drill.wait_ready(slot).await?;
    }

    let killer = {
        let drill = Arc::clone(&drill);
        tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(drill.seed);
            let mut kills = Vec::new();
            for _ in 0..KILL_EVENTS {
                let both = drill.ports.len() > 1 && rng.gen_bool(0.2);
                kills.extend(strike(&drill, &mut rng, both).await?);
            }
            anyhow::Ok(kills)
        })
    };

    let mut drivers = tokio::task::JoinSet::new();
    let mut index = 0_usize;
    while !killer.is_finished() {
        let drill = Arc::clone(&drill);
        let mut rng = StdRng::seed_from_u64(seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9));
        let run_index = index;
        drivers.spawn(async move {
            let mut driven = Driven {
                answer: format!("answer of run {run_index} <&>"),
                amount: rng.gen_range(-1000..1000),
                ..Driven::default()
            };
            drill.start(&mut rng, &mut driven, run_index).await;
            if driven.id.is_empty() {
                return driven;
            }
            drill.drive(rng, driven).await
        });
        index += 1;
        tokio::time::sleep(START_EVERY).await;
    }
    let kills = killer.await??;
    let kill_phase = started.elapsed();

    // Every process is up again. Runs whose start answer was lost are adopted and driven too.
    *drill
        .deadline
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now() + DRAIN_DEADLINE);
    let mut results = Vec::new();
    while let Some(joined) = drivers.join_next().await {
        results.push(joined?);
    }
    let mut rng = StdRng::seed_from_u64(seed.wrapping_add(7));
    let listed: Value = drill
        .client
        .get(drill.url(0, "/api/runs?workflow=crash-drill&limit=500"))
        .bearer_auth(API_TOKEN)
        .send()
        .await?
        .json()
        .await?;
    let known: BTreeSet<String> = results.iter().map(|driven| driven.id.clone()).collect();
    let mut adopted = 0;
    for run in listed["runs"].as_array().into_iter().flatten() {
        let id = run["id"].as_str().unwrap_or_default();
        if known.contains(id) {
            continue;
        }
        adopted += 1;
        let state = drill.run_json(&mut rng, id).await.unwrap_or_default();
        let driven = Driven {
            id: id.to_owned(),
            tag: state["state"]["tag"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            answer: format!("adopted answer {adopted}"),
            amount: rng.gen_range(-1000..1000),
            ..Driven::default()
        };
        let seeded = StdRng::seed_from_u64(rng.gen());
        results.push(drill.drive(seeded, driven).await);
    }
    let total_runs = listed["total"].as_i64().unwrap_or(-1);

    // Check every run through the API.
    let mut problems = Vec::new();
    let mut step_reruns = 0_i64;
    let mut runs_with_reruns = 0;
    let mut stored_unanswered = 0;
    for driven in &results {
        problems.extend(
            driven
                .unexpected
                .iter()
                .map(|problem| format!("{}: {problem}", driven.tag)),
        );
        if driven.id.is_empty() {
            continue;
        }
        let Some(run) = drill.run_json(&mut rng, &driven.id).await else {
            problems.push(format!("{}: cannot read run {}", driven.tag, driven.id));
            continue;
        };
        let tag = &driven.tag;
        if run["status"] != "succeeded" {
            problems.push(format!(
                "{tag}: stuck in {} ({})",
                run["status"], run["error"]
            ));
            continue;
        }
        let steps = run["steps"].as_array().cloned().unwrap_or_default();
        let names: Vec<&str> = steps
            .iter()
            .filter_map(|step| step["name"].as_str())
            .collect();
        if names != ["Prepare", "Ask", "Notify", "Record"]
            || steps
                .iter()
                .any(|step| step["status"] != "succeeded" || step["output"].is_null())
        {
            problems.push(format!("{tag}: steps are not one output each: {steps:?}"));
        }
        let reruns: i64 = steps
            .iter()
            .map(|step| step["attempts"].as_i64().unwrap_or(1) - 1)
            .sum();
        step_reruns += reruns;
        runs_with_reruns += usize::from(reruns > 0);
        if run["state"]["trail"] != json!(["Prepare", "Notify", "Record"]) {
            problems.push(format!(
                "{tag}: a step's result was applied twice or lost: {}",
                run["state"]["trail"]
            ));
        }
        let expected = json!({"answer": driven.answer, "amount": driven.amount});
        if run["state"]["response"] != expected {
            problems.push(format!(
                "{tag}: resumed with {} instead of the submitted {expected}",
                run["state"]["response"]
            ));
        }
        let submitted: Vec<&Value> = run["pages"]
            .as_object()
            .into_iter()
            .flat_map(|pages| pages.values())
            .filter(|page| page["status"] == "submitted")
            .collect();
        if submitted.len() != 1 || submitted[0]["response"] != expected {
            problems.push(format!(
                "{tag}: stored responses {submitted:?}, sent {expected}"
            ));
        }
        if driven.accepted + driven.conflicts + driven.posts_lost == 0 {
            problems.push(format!("{tag}: succeeded though no answer was ever posted"));
        }
        if driven.accepted + driven.conflicts == 0 {
            // Every POST was cut by a kill, yet one was recorded (checked above).
            stored_unanswered += 1;
        }
    }

    // The drill log: what really ran, and whether anything ran twice at once.
    let events = read_events(&drill_log)?;
    let executions = executions(&events, &kills);
    let overlapping = overlaps(&executions);
    for (first, second) in &overlapping {
        problems.push(format!(
            "step {} of {} ran twice at once: pid {} {}..{} and pid {} {}..{}",
            first.step,
            first.tag,
            first.pid,
            first.start,
            first.end,
            second.pid,
            second.start,
            second.end
        ));
    }
    let mut per_step: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for execution in &executions {
        *per_step
            .entry((&execution.tag, &execution.step))
            .or_default() += 1;
    }
    let executions_rerun: usize = per_step.values().map(|count| count - 1).sum();
    let killed_mid_execution = executions
        .iter()
        .filter(|execution| execution.killed)
        .count();
    let in_flight_at = |kill: &Kill, generation: bool| {
        executions.iter().any(|execution| {
            execution.pid == kill.pid && execution.killed && (execution.step == "Ask") == generation
        })
    };
    let kills_mid_step = kills
        .iter()
        .filter(|kill| in_flight_at(kill, false))
        .count();
    let kills_in_generation = kills.iter().filter(|kill| in_flight_at(kill, true)).count();
    let record_done: BTreeMap<&str, i64> = executions
        .iter()
        .filter(|execution| execution.step == "Record" && !execution.killed)
        .fold(BTreeMap::new(), |mut done, execution| {
            let entry = done.entry(execution.tag.as_str()).or_insert(i64::MAX);
            *entry = (*entry).min(execution.end);
            done
        });
    let kills_between_submit_and_resume = kills
        .iter()
        .filter(|kill| {
            results.iter().any(|driven| {
                driven
                    .accepted_at_ms
                    .is_some_and(|at| at <= kill.dead_at_ms)
                    && record_done
                        .get(driven.tag.as_str())
                        .is_some_and(|done| *done > kill.dead_at_ms)
            })
        })
        .count();
    let by_moment = MOMENTS.map(|moment| {
        (
            moment,
            kills.iter().filter(|kill| kill.moment == moment).count(),
        )
    });

    eprintln!(
        "crash drill on {backend} ({processes} process{}), seed {seed}, {:.1} s (kill phase {:.1} s):\n\
         \x20 kills: {} ({by_moment:?}); with a code step in flight: {kills_mid_step}; during generation: {kills_in_generation}; after a 303 before its run recorded it: {kills_between_submit_and_resume}\n\
         \x20 runs: {total_runs} in the database ({adopted} found only by listing: their start's answer was cut), {} succeeded\n\
         \x20 submissions: {} accepted (303), {} answered 409, {} cut by a kill ({stored_unanswered} runs whose every POST was cut still resumed with the posted answer), {} concurrent duplicate pairs; start requests refused or cut by a kill: {}\n\
         \x20 step executions: {} ({killed_mid_execution} cut by a kill, {executions_rerun} re-executions); attempts beyond the first: {step_reruns} in {runs_with_reruns} runs\n\
         \x20 overlapping executions of one step: {}; problems: {}",
        if processes == 1 { "" } else { "es" },
        started.elapsed().as_secs_f64(),
        kill_phase.as_secs_f64(),
        kills.len(),
        results.iter().filter(|driven| driven.finished).count(),
        results.iter().map(|driven| driven.accepted).sum::<usize>(),
        results.iter().map(|driven| driven.conflicts).sum::<usize>(),
        results.iter().map(|driven| driven.posts_lost).sum::<usize>(),
        results.iter().map(|driven| driven.duplicate_pairs).sum::<usize>(),
        results.iter().map(|driven| driven.starts_lost).sum::<usize>(),
        executions.len(),
        overlapping.len(),
        problems.len(),
    );
    for problem in problems.iter().take(20) {
        eprintln!("  problem: {problem}");
    }
    drop(drill);
    drop(fleet);
    assert!(kills.len() >= KILL_EVENTS, "only {} kills", kills.len());
    let driven_ids: BTreeSet<&str> = results
        .iter()
        .map(|driven| driven.id.as_str())
        .filter(|id| !id.is_empty())
        .collect();
    assert_eq!(
        i64::try_from(driven_ids.len()).unwrap_or(-1),
        total_runs,
        "every run in the database was driven"
    );
    assert!(
        problems.is_empty(),
        "{} problems, see above",
        problems.len()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_survives_kill_9_at_every_moment_with_nothing_lost_or_stuck() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("crash.db").display());
    crash_drill("SQLite", url, 1).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_with_two_processes_survives_kill_9_and_never_runs_a_step_twice_at_once(
) -> anyhow::Result<()> {
    let Some(database) = FreshPostgres::create().await? else {
        return Ok(());
    };
    let outcome = crash_drill("PostgreSQL", database.url.clone(), 2).await;
    database.drop_database().await?;
    outcome
}

#[tokio::test]
async fn the_drill_workflow_exists_only_when_its_log_is_configured() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app
        .api_post(
            "/api/runs",
            &json!({"workflow": "crash-drill", "input": {"tag": "x"}}),
        )
        .await?;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["code"], "invalid_run");
    let help = Command::new(BINARY).arg("--help").output()?;
    let help = String::from_utf8(help.stdout)?;
    assert!(help.contains("TESSERA_DRILL_LOG"), "{help}");
    assert!(help.contains("TESSERA_RUNNER_LEASE_SECS"), "{help}");
    Ok(())
}

fn event(pid: u32, step: &str, event: &str, at_ms: i64) -> DrillEvent {
    DrillEvent {
        pid,
        tag: "t".into(),
        step: step.into(),
        event: event.into(),
        at_ms,
    }
}

#[test]
fn the_drill_log_check_sees_a_step_run_twice_at_once_and_ends_a_killed_one_at_its_kill() {
    let kill = Kill {
        pid: 1,
        dead_at_ms: 150,
        moment: Moment::Random,
    };
    // Process 1 was killed at 150 mid-step; process 2 took the step over at 200: no overlap.
    let events = [
        event(1, "Notify", "start", 100),
        event(2, "Notify", "start", 200),
        event(2, "Notify", "end", 300),
    ];
    let found = executions(&events, std::slice::from_ref(&kill));
    assert!(found
        .iter()
        .any(|execution| execution.pid == 1 && execution.killed && execution.end == 150));
    assert!(overlaps(&found).is_empty());
    // Process 2 started while process 1 still ran (it was killed only at 150): an overlap.
    let events = [
        event(1, "Notify", "start", 100),
        event(2, "Notify", "start", 120),
        event(2, "Notify", "end", 300),
    ];
    assert_eq!(overlaps(&executions(&events, &[kill])).len(), 1);
    // Two executions in one process, the first dropped before the second: no overlap.
    let events = [
        event(3, "Ask", "start", 100),
        event(3, "Ask", "dropped", 110),
        event(3, "Ask", "start", 120),
        event(3, "Ask", "end", 130),
    ];
    assert!(overlaps(&executions(&events, &[])).is_empty());
}
