//! The matrix's book: its cells' heads, the runs and searches recorded in its folder, and
//! the record (`matrix.json`) and page (`matrix.html`) made from them, rewritten after every
//! run so that a matrix cut short still has its page.

use super::place::Place;
use super::{
    versions, CellKey, MatrixCommands, MatrixEvent, MatrixRequest, MatrixRunError, RunKey, Say,
};
use crate::matrix::Matrix;
use crate::run::utc_stamp;
use lockpick_reports::matrix::{
    aggregate, safety_counts, with_exploration, write_matrix, CellExplore, CellHead, ColumnInfo,
    MatrixRecord, RowInfo, RunSummary, Until, MATRIX_EXPLORE_DIR, MATRIX_VERSION,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Version of the per-cell search summaries (`explore/<row>--<column>.json`).
pub(super) const CELL_EXPLORE_VERSION: u32 = 1;

pub(super) struct Book {
    /// The whole matrix, with the seeds it runs.
    pub matrix: Matrix,
    pub place: Place,
    /// The command that makes it again, and the one that resumes it.
    pub command: String,
    pub resume_cmd: String,
    /// The servers' versions it names.
    pub versions: Vec<(String, String)>,
    pub heads: BTreeMap<CellKey, CellHead>,
    /// The runs made (`runs/`) and the cells searched (`explore/`).
    pub done: BTreeMap<RunKey, RunSummary>,
    pub explored: BTreeMap<CellKey, CellExplore>,
    /// Seeds added to each cell until its answer is sure, if asked.
    pub until: Option<Until>,
}

impl Book {
    /// The book of the matrix at `place`, with what its folder already records.
    pub fn open(
        req: &MatrixRequest,
        commands: &dyn MatrixCommands,
        matrix: Matrix,
        place: Place,
        heads: BTreeMap<CellKey, CellHead>,
        say: &mut Say,
    ) -> Book {
        let done = read_records(
            &place.dir.join("runs"),
            "a run record",
            say,
            |r: &RunSummary| {
                (r.v == MATRIX_VERSION).then(|| (r.row.clone(), r.column.clone(), r.seed))
            },
        );
        let explored = read_records(
            &place.dir.join(MATRIX_EXPLORE_DIR),
            "a cell exploration",
            say,
            |e: &CellExplore| {
                (e.v == CELL_EXPLORE_VERSION).then(|| (e.row.clone(), e.column.clone()))
            },
        );
        // A page rebuilt from recorded runs names the servers they ran on, not this machine's.
        let recorded_versions = (place.recorded.as_ref())
            .map(|r| r.server_versions.clone())
            .filter(|v| !v.is_empty());
        let versions = match (req.report_only, recorded_versions) {
            (true, Some(v)) => v,
            _ => versions::server_versions(),
        };
        Book {
            command: commands.again(place.fresh, &place.dir, place.shard),
            resume_cmd: commands.resume(&place.dir),
            matrix,
            place,
            versions,
            heads,
            done,
            explored,
            until: None,
        }
    }

    /// How many seeds from the first a cell may have: the matrix's, or with `until` its most.
    pub fn seed_window(&self) -> u64 {
        self.until.map_or(self.matrix.seeds, |u| u.max_seeds)
    }

    /// Whether a cell still needs seeds to make its answer sure (`until`); never without it.
    pub fn unsure(&self, row: &str, column: &str) -> bool {
        let Some(until) = self.until else {
            return false;
        };
        let runs = self.runs_of(row, column);
        let (k, n) = safety_counts(&runs);
        until.open(k, n, runs.len() as u64)
    }

    /// A cell's runs recorded within its seeds.
    pub fn runs_of(&self, row: &str, column: &str) -> Vec<RunSummary> {
        let (row, column) = (row.to_owned(), column.to_owned());
        (self.done)
            .range((row.clone(), column.clone(), 0)..=(row, column, u64::MAX))
            .filter(|(k, _)| k.2.wrapping_sub(self.matrix.first_seed) < self.seed_window())
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Records a finished run in `runs/` and rewrites the matrix's record and page.
    pub fn add_run(&mut self, key: RunKey, summary: RunSummary) -> Result<(), MatrixRunError> {
        self.put_run(key, summary)?;
        self.write().map(drop)
    }

    /// Records a run in `runs/`, in place of any record it had, leaving the page as it is.
    pub fn put_run(&mut self, key: RunKey, summary: RunSummary) -> Result<(), MatrixRunError> {
        let name = format!("{}--{}--seed{}.json", key.0, key.1, key.2);
        let json = serde_json::to_vec_pretty(&summary).expect("summaries serialize");
        let path = self.place.dir.join("runs").join(name);
        lockpick_reports::write_atomic(&path, &json).map_err(MatrixRunError::Write)?;
        self.done.insert(key, summary);
        Ok(())
    }

    /// Records a cell's search in `explore/` and rewrites the matrix's record and page.
    pub fn add_search(&mut self, key: CellKey, summary: CellExplore) -> Result<(), MatrixRunError> {
        let dir = self.place.dir.join(MATRIX_EXPLORE_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| MatrixRunError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        let json = serde_json::to_vec_pretty(&summary).expect("summaries serialize");
        let file = dir.join(format!("{}--{}.json", key.0, key.1));
        lockpick_reports::write_atomic(&file, &json).map_err(MatrixRunError::Write)?;
        self.explored.insert(key, summary);
        self.write().map(drop)
    }

    /// Writes the record and page as the book stands; the page's path.
    pub fn write(&self) -> Result<PathBuf, MatrixRunError> {
        self.write_record(&self.record())
    }

    /// Writes `record` and its page.
    pub fn write_record(&self, record: &MatrixRecord) -> Result<PathBuf, MatrixRunError> {
        write_matrix(record, &self.place.dir, &self.resume_cmd).map_err(MatrixRunError::Write)
    }

    /// The record of the matrix as the book stands: every cell from its runs and search.
    pub fn record(&self) -> MatrixRecord {
        let m = &self.matrix;
        let mut cells = Vec::new();
        for r in &m.rows {
            for c in &m.columns {
                let head = self.heads[&(r.name.clone(), c.name.clone())].clone();
                let runs = self.runs_of(&r.name, &c.name);
                let searched = self
                    .explored
                    .get(&(r.name.clone(), c.name.clone()))
                    .cloned();
                cells.push(with_exploration(aggregate(head, runs), searched));
            }
        }
        MatrixRecord {
            v: MATRIX_VERSION,
            name: m.name.clone(),
            description: m.description.clone(),
            started: self.place.started.clone(),
            updated: utc_stamp(SystemTime::now()),
            // Runs are only ever added by the build that made the first (see `place`), so a
            // recorded build is the runs' even when this is a page made again by another.
            lockpick_version: (self.place.recorded.as_ref())
                .map_or(crate::LOCKPICK_BUILD, |r| r.lockpick_version.as_str())
                .to_owned(),
            server_versions: self.versions.clone(),
            command: self.command.clone(),
            file_folder: Some(self.place.folder.display().to_string()),
            seeds: m.seeds,
            until: self.until,
            interrupted: false,
            shard: self.place.shard.map(|s| s.to_string()),
            missing_shards: self.place.missing_shards.clone(),
            rows: m.rows.iter().map(|r| self.row_info(r)).collect(),
            columns: (m.columns.iter())
                .map(|c| ColumnInfo {
                    name: c.name.clone(),
                    about: c.about.clone(),
                })
                .collect(),
            cells,
            expectations: self.place.expectations.clone(),
        }
    }

    /// A row as the record shows it, with what its runs reported.
    fn row_info(&self, r: &crate::matrix::Row) -> RowInfo {
        RowInfo {
            name: r.name.clone(),
            lock: r.lock_name(),
            server: r.server.name().to_owned(),
            client: r.client_kind.name().to_owned(),
            fenced: r.fenced,
            ttl_ms: r.lease_ms.unwrap_or(r.ttl_ms),
            about: r.about.clone(),
            library: r.is_adapter().then(|| self.library_of(&r.name)),
            server_version: self.server_version_of(&r.name),
            discipline: Some(r.discipline().name().to_owned()),
        }
    }

    /// The library (and version) a library row's runs reported, every one if they differ.
    fn library_of(&self, row: &str) -> String {
        let seen = self.reported(row, |r| r.library.as_deref());
        if seen.is_empty() {
            "not known before a run (its adapter names it)".to_owned()
        } else {
            seen.join(" / ")
        }
    }

    /// The server versions a row's runs reported (`etcd 3.6.16`), every one if they differ;
    /// `None` before a run, or for a server kind that does not report one.
    fn server_version_of(&self, row: &str) -> Option<String> {
        let seen = self.reported(row, |r| r.server_version.as_deref());
        (!seen.is_empty()).then(|| seen.join(" / "))
    }

    /// What `what` reads from each of a row's runs, each once, sorted.
    fn reported<'a>(
        &'a self,
        row: &str,
        what: impl Fn(&'a RunSummary) -> Option<&'a str>,
    ) -> Vec<&'a str> {
        let mut seen: Vec<&str> = (self.done.values())
            .filter(|r| r.row == row)
            .filter_map(what)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        seen
    }
}

/// The records of type `T` in the folder `dir`, by the key `key` gives; a file that does not
/// read as `T`, or whose version `key` refuses (`None`), is ignored with a line naming it as
/// not `what` of this version (and its run or search made again).
fn read_records<T: serde::de::DeserializeOwned, K: Ord>(
    dir: &Path,
    what: &str,
    say: &mut Say,
    key: impl Fn(&T) -> Option<K>,
) -> BTreeMap<K, T> {
    let mut out = BTreeMap::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in read.flatten() {
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let record = serde_json::from_slice::<T>(&bytes).ok();
        match record.and_then(|r| key(&r).map(|k| (k, r))) {
            Some((k, r)) => {
                out.insert(k, r);
            }
            None => say(MatrixEvent::Note(format!(
                "ignoring {}: not {what} of this version",
                entry.path().display()
            ))),
        }
    }
    out
}
