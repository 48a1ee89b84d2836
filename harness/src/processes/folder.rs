//! The on-disk layout of one node: `<run_dir>/nodes/<name>/` with its config, logs and data.

use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Lines of each log shown in readiness errors.
const TAIL_LINES: usize = 20;
/// Bytes read from the end of a log to find those lines.
const TAIL_BYTES: u64 = 8 * 1024;

/// Paths of one node's folder. All absolute when the run dir is.
#[derive(Debug, Clone)]
pub(crate) struct NodeFolder {
    pub(crate) root: PathBuf,
    /// The server's working data (RDB/AOF files, etcd/ZooKeeper data).
    pub(crate) data: PathBuf,
    /// The config file written by the node kind.
    pub(crate) config: PathBuf,
    /// The log the server writes itself.
    pub(crate) log: PathBuf,
    /// stdout and stderr of the process: what it prints before its own log is open.
    pub(crate) console: PathBuf,
}

impl NodeFolder {
    pub(crate) fn new(run_dir: &Path, name: &str, config_file: &str) -> NodeFolder {
        let root = absolute(&run_dir.join("nodes").join(name));
        NodeFolder {
            data: root.join("data"),
            config: root.join(config_file),
            log: root.join("server.log"),
            console: root.join("console.log"),
            root,
        }
    }

    /// Creates the folder; fails if it already exists, so two runs never share data.
    pub(crate) fn create(&self) -> io::Result<()> {
        if let Some(parent) = self.root.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::create_dir(&self.root)?;
        fs::create_dir(&self.data)
    }

    /// The last lines of the server log and of the console output, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        let mut out = String::new();
        for path in [&self.log, &self.console] {
            let tail = tail(path).unwrap_or_else(|err| format!("(unreadable: {err})\n"));
            out.push_str(&format!("--- {}\n{tail}", path.display()));
        }
        out
    }
}

/// Sizes of the server log and the console log, to read later what was appended since.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogMark {
    log: u64,
    console: u64,
}

impl NodeFolder {
    pub(crate) fn mark_logs(&self) -> LogMark {
        let size = |path: &Path| fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        LogMark {
            log: size(&self.log),
            console: size(&self.console),
        }
    }

    /// What both logs got since `mark`, concatenated.
    pub(crate) fn logs_since(&self, mark: LogMark) -> String {
        let mut out = String::new();
        for (path, from) in [(&self.log, mark.log), (&self.console, mark.console)] {
            if let Ok(bytes) = read_from(path, from) {
                out.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
        out
    }
}

fn read_from(path: &Path, offset: u64) -> io::Result<Vec<u8>> {
    let mut file = fs::File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn tail(path: &Path) -> io::Result<String> {
    let len = fs::metadata(path)?.len();
    let bytes = read_from(path, len.saturating_sub(TAIL_BYTES))?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    let mut out = lines[start..].join("\n");
    out.push('\n');
    Ok(out)
}

/// Servers are started with their own working directory semantics, so every path handed to
/// them must be absolute.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
