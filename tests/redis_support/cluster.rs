//! A private three-primary Redis Cluster on loopback ports.
//!
//! Each node is a `redis-server --cluster-enabled yes` with its files in a
//! temporary folder; `redis-cli --cluster create` joins them and assigns the
//! slots. Every node is killed and the folder removed when the cluster drops,
//! also when a test panics. Without `redis-server` or `redis-cli` a test is
//! skipped loudly, or fails under `TOLLGATE_REQUIRE_REDIS=1`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Primaries in every test cluster.
const PRIMARIES: usize = 3;

/// How long a cluster may take to reach `cluster_state:ok`.
const FORMING_PATIENCE: Duration = Duration::from_secs(30);

/// Added to a node's port to get its cluster bus port (Redis's fixed rule
/// before 7.0, where `--cluster-port` does not exist).
const BUS_PORT_OFFSET: u16 = 10_000;

/// A running cluster; its nodes stop and its files go when it drops.
pub struct TestCluster {
    nodes: Vec<ClusterNode>,
    dir: PathBuf,
}

/// One `redis-server` of the cluster.
struct ClusterNode {
    port: u16,
    child: Option<Child>,
}

impl ClusterNode {
    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for ClusterNode {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh cluster for `test`, or a skip (a failure under
/// `TOLLGATE_REQUIRE_REDIS=1`) when one cannot be started.
pub fn cluster(test: &str) -> Option<TestCluster> {
    let mut last_error = String::new();
    // A free port can be taken by someone else before the node binds it.
    for _ in 0..3 {
        match TestCluster::start() {
            Ok(cluster) => return Some(cluster),
            Err(Startup::Missing(why)) => return super::unavailable(test, &why),
            Err(Startup::Failed(why)) => last_error = why,
        }
    }
    super::unavailable(test, &format!("no Redis Cluster formed: {last_error}"))
}

enum Startup {
    /// A binary cannot be run at all.
    Missing(String),
    /// The binaries run but the cluster did not form.
    Failed(String),
}

impl TestCluster {
    fn start() -> Result<TestCluster, Startup> {
        let server = binary("REDIS_SERVER", "redis-server")?;
        let cli = binary("REDIS_CLI", "redis-cli")?;
        let dir = private_dir().map_err(Startup::Failed)?;
        let mut cluster = TestCluster {
            nodes: Vec::new(),
            dir,
        };
        for port in node_ports().map_err(Startup::Failed)? {
            let child = Command::new(&server)
                .args(["--port", &port.to_string()])
                .args(["--cluster-enabled", "yes"])
                .arg("--cluster-config-file")
                .arg(cluster.dir.join(format!("nodes-{port}.conf")))
                .args(["--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&cluster.dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|error| Startup::Failed(format!("cannot run {server}: {error}")))?;
            cluster.nodes.push(ClusterNode {
                port,
                child: Some(child),
            });
        }
        for node in &cluster.nodes {
            super::ping(&node.url(), Duration::from_secs(5)).map_err(|why| {
                Startup::Failed(format!("node on port {} did not answer: {why}", node.port))
            })?;
        }
        cluster.create(&cli)?;
        cluster.wait_until_ok()?;
        Ok(cluster)
    }

    /// Joins the nodes and spreads the slots over them, no replicas.
    fn create(&self, cli: &str) -> Result<(), Startup> {
        let addresses: Vec<String> = self
            .nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.port))
            .collect();
        let output = Command::new(cli)
            .arg("--cluster")
            .arg("create")
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .map_err(|error| Startup::Failed(format!("cannot run {cli}: {error}")))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(Startup::Failed(format!(
                "{cli} --cluster create failed ({}): {}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )))
        }
    }

    /// Waits until every node reports `cluster_state:ok` and knows all
    /// primaries.
    fn wait_until_ok(&self) -> Result<(), Startup> {
        let deadline = Instant::now() + FORMING_PATIENCE;
        let mut connections = self.connections();
        loop {
            let pending = connections.iter_mut().position(|connection| {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(connection)
                    .unwrap_or_default();
                let known = format!("cluster_known_nodes:{PRIMARIES}");
                !(info.contains("cluster_state:ok") && info.lines().any(|line| line == known))
            });
            match pending {
                None => return Ok(()),
                Some(index) if Instant::now() > deadline => {
                    return Err(Startup::Failed(format!(
                        "node on port {} never reached cluster_state:ok",
                        self.nodes[index].port
                    )));
                }
                Some(_) => thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// The `redis://` URLs of the nodes.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(ClusterNode::url).collect()
    }

    /// A blocking Cluster client that starts from every node.
    pub fn client(&self) -> redis::cluster::ClusterClient {
        redis::cluster::ClusterClient::builder(self.urls())
            .connection_timeout(Duration::from_secs(5))
            .response_timeout(Duration::from_secs(5))
            .build()
            .expect("a valid Cluster client")
    }

    /// A plain connection to each node (in node order), for inspecting it
    /// alone.
    pub fn connections(&self) -> Vec<redis::Connection> {
        self.nodes
            .iter()
            .map(|node| {
                redis::Client::open(node.url())
                    .and_then(|client| client.get_connection_with_timeout(Duration::from_secs(5)))
                    .expect("a connection to a cluster node")
            })
            .collect()
    }

    /// Runs `SCRIPT FLUSH` on every node.
    pub fn flush_scripts(&self) {
        for mut connection in self.connections() {
            let () = redis::cmd("SCRIPT")
                .arg("FLUSH")
                .query(&mut connection)
                .expect("SCRIPT FLUSH");
        }
    }

    /// The scripts each node has cached, in node order.
    pub fn cached_scripts(&self) -> Vec<u64> {
        self.connections()
            .iter_mut()
            .map(|connection| {
                let info: String = redis::cmd("INFO")
                    .arg("memory")
                    .query(connection)
                    .expect("INFO memory");
                info.lines()
                    .find_map(|line| line.strip_prefix("number_of_cached_scripts:"))
                    .and_then(|n| n.trim().parse().ok())
                    .expect("INFO memory reports number_of_cached_scripts")
            })
            .collect()
    }

    /// The keys under `prefix` that each node holds, in node order.
    pub fn keys_under(&self, prefix: &str) -> Vec<Vec<Vec<u8>>> {
        self.connections()
            .iter_mut()
            .map(|connection| super::keys_under(connection, prefix))
            .collect()
    }
}

/// The slot Redis computes for `name`, asked on `connection` (any node).
pub fn keyslot(connection: &mut redis::Connection, name: &[u8]) -> u16 {
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(name)
        .query(connection)
        .expect("CLUSTER KEYSLOT")
}

/// The program named by `variable`, else `default`, if it runs at all.
fn binary(variable: &str, default: &str) -> Result<String, Startup> {
    let program = std::env::var(variable).unwrap_or_else(|_| default.to_owned());
    match Command::new(&program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => Ok(program),
        Err(error) => Err(Startup::Missing(format!(
            "the Cluster tests start their own nodes with redis-server and redis-cli \
             (REDIS_URL is not used); cannot run {program:?}: {error}"
        ))),
    }
}

/// A new, empty folder under the system's temporary folder.
fn private_dir() -> Result<PathBuf, String> {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    // Relaxed: only uniqueness of the values matters.
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "tollgate-cluster-{}-{nanos}-{n}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Distinct free ports whose cluster bus ports are free too.
fn node_ports() -> Result<Vec<u16>, String> {
    let mut ports = Vec::with_capacity(PRIMARIES);
    for _ in 0..200 {
        if ports.len() == PRIMARIES {
            break;
        }
        let port = super::free_port()?;
        let Some(bus) = port.checked_add(BUS_PORT_OFFSET) else {
            continue;
        };
        let clash = ports
            .iter()
            .any(|&taken: &u16| taken == port || taken + BUS_PORT_OFFSET == port || taken == bus);
        if !clash && is_free(bus) {
            ports.push(port);
        }
    }
    if ports.len() == PRIMARIES {
        Ok(ports)
    } else {
        Err("no free ports with free cluster bus ports".to_owned())
    }
}

fn is_free(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
}
