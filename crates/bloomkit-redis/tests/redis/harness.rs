//! Starts real `redis-server` processes with the module loaded, on free loopback ports, in
//! temporary directories, and kills them when dropped (also when a test fails).
//!
//! The module: `$BLOOMKIT_REDIS_MODULE` if set (a path to a built .so, e.g. a release
//! build); otherwise the .so that `cargo test` built for this run, which lies in the same
//! `deps` directory as the test binary (the package's library is compiled with both its
//! crate types, cdylib and rlib, before its integration tests); failing that, the harness
//! runs `cargo build -p bloomkit-redis --lib --profile test` once and takes the path from
//! cargo's JSON messages (so `CARGO_TARGET_DIR` and the like are honoured).

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The file name of the module's shared library (`libbloomkit_redis.so` on Linux).
fn library_name() -> String {
    format!(
        "{}bloomkit_redis{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The path of the module's shared library.
pub fn module_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = std::env::var_os("BLOOMKIT_REDIS_MODULE") {
            return PathBuf::from(path);
        }
        // `cargo test` compiles the package's library (crate types cdylib and rlib) before
        // this test binary, into the same deps directory: that .so is the current code,
        // built with the same profile and features.
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join(library_name())));
        if let Some(path) = beside.filter(|p| p.is_file()) {
            return path;
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args([
                "build",
                "-p",
                "bloomkit-redis",
                "--lib",
                "--profile",
                "test",
                "--message-format=json-render-diagnostics",
            ])
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo build for the module");
        assert!(
            output.status.success(),
            "cargo build -p bloomkit-redis failed"
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let suffix = library_name();
        stdout
            .lines()
            .filter(|l| l.contains("\"compiler-artifact\""))
            .flat_map(|l| l.split('"'))
            .find(|field| field.ends_with(&suffix))
            .map(PathBuf::from)
            .expect("cargo reported no module artifact")
    })
}

/// A free TCP port on 127.0.0.1 (free when asked; the server start retries on a clash).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a loopback port")
        .port()
}

/// A running redis-server with the module loaded.
pub struct Server {
    child: Option<Child>,
    pub port: u16,
    dir: tempfile::TempDir,
    module_args: Vec<String>,
    config: Vec<String>,
    module: PathBuf,
}

impl Server {
    /// A server with the module's default arguments.
    pub fn start() -> Self {
        Self::start_with(&[], &[])
    }

    /// A server with module arguments (`["MAX_KEY_MEMORY", "4096"]`) and extra config
    /// directives (`["--appendonly", "yes"]`).
    pub fn start_with(module_args: &[&str], config: &[&str]) -> Self {
        Self::start_module(module_path(), module_args, config)
    }

    /// A server with another module (a reference build of RedisBloom, say).
    pub fn start_module(module: &Path, module_args: &[&str], config: &[&str]) -> Self {
        let mut server = Self {
            child: None,
            port: 0,
            dir: tempfile::tempdir().expect("temporary directory"),
            module_args: module_args.iter().map(|s| s.to_string()).collect(),
            config: config.iter().map(|s| s.to_string()).collect(),
            module: module.to_path_buf(),
        };
        server.launch_on_free_port();
        server
    }

    /// A server with the module that starts from a copy of an RDB file (as `dump.rdb` in
    /// its own directory), and extra config directives.
    pub fn start_from_rdb(rdb: &Path, config: &[&str]) -> Self {
        Self::start_module_from_rdb(module_path(), rdb, config)
    }

    /// [`start_from_rdb`](Self::start_from_rdb) with another module.
    pub fn start_module_from_rdb(module: &Path, rdb: &Path, config: &[&str]) -> Self {
        let mut server = Self {
            child: None,
            port: 0,
            dir: tempfile::tempdir().expect("temporary directory"),
            module_args: Vec::new(),
            config: config.iter().map(|s| s.to_string()).collect(),
            module: module.to_path_buf(),
        };
        std::fs::copy(rdb, server.dir.path().join("dump.rdb")).expect("copy the RDB file");
        server.launch_on_free_port();
        server
    }

    /// Adds config directives for the next [`restart`](Self::restart).
    pub fn add_config(&mut self, config: &[&str]) {
        self.config.extend(config.iter().map(|s| s.to_string()));
    }

    fn launch_on_free_port(&mut self) {
        for _ in 0..5 {
            self.port = free_port();
            if self.launch() {
                return;
            }
        }
        panic!("redis-server did not start; log:\n{}", self.log());
    }

    /// Starts the process on `self.port`; false if it exited (e.g. the port was taken).
    fn launch(&mut self) -> bool {
        let module = self.module.to_str().expect("UTF-8 module path").to_string();
        let mut loadmodule = vec![module];
        loadmodule.extend(self.module_args.iter().cloned());
        let mut cmd = Command::new("redis-server");
        cmd.arg("--port")
            .arg(self.port.to_string())
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--enable-debug-command", "yes", "--daemonize", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(self.dir.path().join("redis.log"))
            .arg("--loadmodule")
            .args(&loadmodule)
            .args(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .expect("start redis-server (is it installed? scripts/test installs it)");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                eprintln!("redis-server exited at start: {err}{}", self.log());
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() && self.ping() {
                self.child = Some(child);
                return true;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn ping(&self) -> bool {
        redis::Client::open(self.url())
            .and_then(|c| c.get_connection())
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
            .is_ok()
    }

    /// The server's `redis://` URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A new connection.
    pub fn conn(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .expect("client")
            .get_connection()
            .expect("connect")
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server is running").id()
    }

    /// The server's data directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
    }

    /// Stops the process (SHUTDOWN NOSAVE, then kill) and starts it again on the same
    /// port and directory, so it loads whatever RDB/AOF is there.
    pub fn restart(&mut self) {
        self.stop();
        if !self.launch() {
            self.launch_on_free_port();
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Ok(mut c) = redis::Client::open(self.url()).and_then(|c| c.get_connection()) {
                let _ = redis::cmd("SHUTDOWN").arg("NOSAVE").query::<()>(&mut c);
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
