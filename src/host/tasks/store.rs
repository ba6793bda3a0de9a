//! Where the task records of [`super::TaskRecords`] live on disk, shared
//! safely by every host on one `dataDir` (the VS Code setup: each window
//! of an app shares its `globalStorageUri`).
//!
//! Layout: `<dataDir>/.tasks/` (mode `0700`; the plugin data directory of a
//! plugin named `.tasks` gets a suffix, see `ensure_plugin_data_dir`), one
//! record file per host instance, `<instance>.json` (mode `0600`), and its
//! lock file `<instance>.lock`, on which the host holds an exclusive
//! `flock(2)` for as long as it runs (the kernel drops it when the process
//! dies, even by SIGKILL). `<instance>` is 16 random hex digits.
//!
//! - A host writes only its own file, so two hosts never overwrite each
//!   other's records.
//! - At creation a host adopts the files of hosts no longer running (their
//!   lock is free): it takes their lock, reads the file (a regular file
//!   only, opened non-blocking, at most [`MAX_TASK_RECORD_FILE_BYTES`];
//!   a named pipe, a device, a symlink to one or a larger file is refused
//!   with a `warn` and removed), merges their records into its own (at
//!   most [`MAX_RECORDED_TASKS`] in all, the rest dropped with a `warn`
//!   naming the count), writes its own file, then removes theirs. Records
//!   of a running host are never taken: no host completes the AHP tool
//!   calls of another live host. At most [`MAX_TASK_RECORD_FILES`]
//!   entries of the directory are looked at. A released lock can look held
//!   for a moment (a child process being spawned holds a copy of its
//!   descriptor from fork to exec): those records wait for a later host.
//! - Every write goes to a new temporary file with a random name, created
//!   with `O_CREAT | O_EXCL` (`create_new`: a planted file or symlink of
//!   that name makes the write fail, never followed), synced, then renamed
//!   over the host's file. Lock files are opened `O_NOFOLLOW`.
//! - A host whose records are all gone removes its own files when it is
//!   disposed; with records left they stay for the next host. The lock and
//!   temporary files a crashed host left are removed by the next host once
//!   older than [`STALE_TASK_FILE_MS`] and unlocked.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::{Record, RecordFile};
use crate::config::launch::TASK_RECORDS_DIR;
use crate::config::{read_regular_file, ReadBounds};
use crate::limits::{
    MAX_RECORDED_TASKS, MAX_TASK_RECORD_FILES, MAX_TASK_RECORD_FILE_BYTES, STALE_TASK_FILE_MS,
};
use crate::platform;

/// The directory under `dataDir` that holds the record files.
const DIR_NAME: &str = TASK_RECORDS_DIR;

/// One host instance's record file and lock.
pub(super) struct TaskStore {
    dir: PathBuf,
    instance: String,
    /// The held lock (`None` once released) and the generation last
    /// written; writes and the release are serialized by this lock.
    state: Mutex<StoreState>,
}

struct StoreState {
    lock: Option<File>,
    written: u64,
}

/// What opening the store found.
pub(super) struct Opened {
    pub store: TaskStore,
    /// The adopted records (bounded, unique task ids).
    pub records: Vec<Record>,
    /// `warn` messages (unreadable files, dropped records).
    pub warnings: Vec<String>,
}

fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|_| std::io::Error::other("no random source"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn is_instance(stem: &str) -> bool {
    stem.len() == 16 && stem.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Opens (or creates) a lock file without following a symlink.
fn open_lock(path: &Path, create: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true);
    if create {
        options.create_new(true);
        platform::private_file(&mut options);
    }
    platform::open_no_follow(&mut options);
    options.open(path)
}

/// Creates `<data_dir>/.tasks` (mode `0700`) and checks it is a directory
/// itself, not a symlink to one.
fn ensure_dir(data_dir: &Path) -> Result<PathBuf, String> {
    let dir = data_dir.join(DIR_NAME);
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    platform::private_dir(&mut builder);
    builder
        .create(&dir)
        .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let kind = std::fs::symlink_metadata(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .file_type();
    if !kind.is_dir() {
        return Err(format!("{}: not a directory", dir.display()));
    }
    Ok(dir)
}

impl TaskStore {
    /// Opens this host's store under `data_dir` and adopts the records of
    /// hosts no longer running (see the module documentation). Blocking.
    ///
    /// # Errors
    /// The message naming the directory or file that cannot be made.
    pub fn open(data_dir: &Path) -> Result<Opened, String> {
        let dir = ensure_dir(data_dir)?;
        let instance = random_hex().map_err(|e| e.to_string())?;
        let lock_path = dir.join(format!("{instance}.lock"));
        let lock = open_lock(&lock_path, true)
            .map_err(|e| format!("{}: cannot create: {e}", lock_path.display()))?;
        if !platform::lock_exclusive(&lock) {
            return Err(format!("{}: cannot lock", lock_path.display()));
        }
        let store = TaskStore {
            dir,
            instance,
            state: Mutex::new(StoreState {
                lock: Some(lock),
                written: 0,
            }),
        };
        let mut adopted = Adoption::default();
        store.adopt(&mut adopted);
        let records = adopted.records;
        if !records.is_empty() {
            store.save(1, &records);
        }
        for (data, lock_path, _lock) in adopted.taken {
            let _ = std::fs::remove_file(data);
            let _ = std::fs::remove_file(lock_path);
        }
        let mut warnings = adopted.warnings;
        if adopted.dropped > 0 {
            warnings.push(format!(
                "{}: {} recorded tasks beyond the limit of {MAX_RECORDED_TASKS} (or repeated) \
                 were dropped; their AHP tool calls are not completed by this host",
                store.dir.display(),
                adopted.dropped
            ));
        }
        Ok(Opened {
            store,
            records,
            warnings,
        })
    }

    /// Takes the record files of hosts no longer running into `into`.
    fn adopt(&self, into: &mut Adoption) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten().take(MAX_TASK_RECORD_FILES) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".json") else {
                self.sweep(&name);
                continue;
            };
            if !is_instance(stem) || stem == self.instance {
                continue;
            }
            let lock_path = self.dir.join(format!("{stem}.lock"));
            let lock = match open_lock(&lock_path, false) {
                Ok(lock) => lock,
                // Its host is gone and so is its lock: whoever creates it adopts the file.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    match open_lock(&lock_path, true) {
                        Ok(lock) => lock,
                        Err(_) => continue,
                    }
                }
                Err(_) => continue,
            };
            if !platform::lock_exclusive(&lock) {
                continue; // a running host's records
            }
            let data = self.dir.join(&name);
            into.take(&data);
            into.taken.push((data, lock_path, lock));
        }
    }

    /// Removes a leftover of a host that ended without cleaning up (a
    /// crash): its lock file without a record file, or a temporary file,
    /// older than [`STALE_TASK_FILE_MS`] (a new host's lock file is locked
    /// at once; the age covers the moment between) and not locked.
    fn sweep(&self, name: &str) {
        let (stem, lock_file) = match (name.strip_suffix(".lock"), name.strip_suffix(".tmp")) {
            (Some(stem), _) => (stem, true),
            (None, Some(rest)) => (rest.split('.').next().unwrap_or_default(), false),
            (None, None) => return,
        };
        if !is_instance(stem) || stem == self.instance {
            return;
        }
        let path = self.dir.join(name);
        let stale = std::fs::symlink_metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= Duration::from_millis(STALE_TASK_FILE_MS));
        if !stale || (lock_file && self.dir.join(format!("{stem}.json")).exists()) {
            return;
        }
        let lock = open_lock(&self.dir.join(format!("{stem}.lock")), false);
        if lock.is_ok_and(|lock| !platform::lock_exclusive(&lock)) {
            return; // its host runs
        }
        let _ = std::fs::remove_file(&path);
    }

    /// Writes `records` as this host's file (generation `generation`; an
    /// older generation than the last written, or any write after
    /// [`TaskStore::release`], is skipped). No records: the file is removed.
    /// A failure is left for the next write.
    pub fn save(&self, generation: u64, records: &[Record]) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.lock.is_none() || generation < state.written {
            return;
        }
        state.written = generation;
        let path = self.dir.join(format!("{}.json", self.instance));
        if records.is_empty() {
            let _ = std::fs::remove_file(&path);
            return;
        }
        let file = RecordFile {
            version: 1,
            tasks: records.to_vec(),
        };
        let Ok(bytes) = serde_json::to_vec_pretty(&file) else {
            return;
        };
        let Ok(suffix) = random_hex() else { return };
        let tmp = self.dir.join(format!("{}.{suffix}.tmp", self.instance));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        platform::private_file(&mut options);
        let written = options
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()));
        match written {
            Ok(()) => {
                if std::fs::rename(&tmp, &path).is_err() {
                    let _ = std::fs::remove_file(&tmp);
                }
            }
            Err(_) => {
                let _ = std::fs::remove_file(&tmp);
            }
        }
    }

    /// Lets other hosts adopt this host's records: no further write; the
    /// lock is dropped; with no records left (`empty`) both files are removed.
    pub fn release(&self, empty: bool) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.lock.is_none() {
            return;
        }
        if empty {
            let _ = std::fs::remove_file(self.dir.join(format!("{}.json", self.instance)));
        }
        // The handle closes before its file is removed: on Windows a file
        // removed while open stays until its last handle closes.
        state.lock = None;
        if empty {
            let _ = std::fs::remove_file(self.dir.join(format!("{}.lock", self.instance)));
        }
    }
}

/// The records taken from other hosts' files.
#[derive(Default)]
struct Adoption {
    records: Vec<Record>,
    seen: HashSet<String>,
    dropped: usize,
    warnings: Vec<String>,
    /// Adopted files, their lock files and the held locks (removed after
    /// this host wrote the records).
    taken: Vec<(PathBuf, PathBuf, File)>,
}

impl Adoption {
    fn take(&mut self, data: &Path) {
        let bounds = ReadBounds {
            max_bytes: MAX_TASK_RECORD_FILE_BYTES,
            timeout: Duration::ZERO,
            limit_name: "MAX_TASK_RECORD_FILE_BYTES",
            timeout_name: "configReadTimeoutMs",
        };
        // A link is never followed (lstat): a planted one could make this
        // host adopt records of a file outside `dataDir`.
        let linked = std::fs::symlink_metadata(data).is_ok_and(|m| m.file_type().is_symlink());
        let text = if linked {
            Err("cannot read: it is a symbolic link, not a regular file".to_owned())
        } else {
            read_regular_file(data, bounds).map_err(|why| format!("cannot read: {why}"))
        };
        let file = text.and_then(|text| {
            serde_json::from_str::<RecordFile>(&text)
                .map_err(|e| format!("not a task record ({e})"))
        });
        let tasks = match file {
            Ok(file) => file.tasks,
            Err(why) => {
                self.warnings
                    .push(format!("{}: {why}; ignored", data.display()));
                return;
            }
        };
        for record in tasks {
            let key = record.task_id.clone();
            if self.records.len() >= MAX_RECORDED_TASKS || !self.seen.insert(key) {
                self.dropped += 1;
                continue;
            }
            self.records.push(record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(task_id: &str) -> Record {
        Record {
            task_id: task_id.to_owned(),
            server_id: "s".into(),
            tool: "hold".into(),
            chat: "ahp-chat:/c".into(),
            turn_id: "t".into(),
            tool_call_id: task_id.to_owned(),
            display_name: "hold".into(),
            recorded_at_ms: 1,
            ttl_ms: None,
        }
    }

    /// Opens a store that adopts something. A released lock can look held
    /// for a moment: a child process another test of this binary spawns
    /// holds a copy of every descriptor (the lock's open file description
    /// among them) from its fork to its exec, and `flock` locks belong to
    /// that description. So a few tries, each a new host that found nothing
    /// to adopt (its own files empty); never a wait on a lock that stays held.
    fn adopting(data: &Path) -> Opened {
        for _ in 0..50 {
            let opened = TaskStore::open(data).unwrap();
            if !opened.records.is_empty() {
                return opened;
            }
            opened.store.release(true);
            std::thread::sleep(Duration::from_millis(20));
        }
        TaskStore::open(data).unwrap()
    }

    #[test]
    fn a_running_host_keeps_its_records_and_a_released_one_is_adopted_once() {
        let data = tempfile::tempdir().unwrap();
        let first = TaskStore::open(data.path()).unwrap();
        first.store.save(5, &[record("a")]);
        // An older generation never replaces a newer one.
        first.store.save(4, &[]);
        let second = TaskStore::open(data.path()).unwrap();
        assert!(second.records.is_empty(), "the first host still runs");
        first.store.release(false);
        first.store.save(6, &[]);
        let third = adopting(data.path());
        let ids: Vec<&str> = third.records.iter().map(|r| r.task_id.as_str()).collect();
        assert_eq!(ids, ["a"]);
        let fourth = TaskStore::open(data.path()).unwrap();
        assert!(fourth.records.is_empty(), "adopted once");
        let names: Vec<String> = std::fs::read_dir(data.path().join(DIR_NAME))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
        assert_eq!(names.iter().filter(|n| n.ends_with(".json")).count(), 1);
        drop((second, third, fourth));
    }

    #[test]
    fn a_crashed_hosts_stale_lock_and_temporary_files_are_swept_a_fresh_lock_is_kept() {
        let data = tempfile::tempdir().unwrap();
        let dir = ensure_dir(data.path()).unwrap();
        let old = std::time::SystemTime::now() - Duration::from_millis(STALE_TASK_FILE_MS * 2);
        let plant = |name: &str, modified: Option<std::time::SystemTime>| {
            let file = File::create(dir.join(name)).unwrap();
            if let Some(t) = modified {
                file.set_modified(t).unwrap();
            }
        };
        plant("00000000000000aa.lock", Some(old));
        plant("00000000000000aa.00000000000000ff.tmp", Some(old));
        plant("00000000000000bb.lock", None);
        let _opened = TaskStore::open(data.path()).unwrap();
        let names: HashSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.contains("00000000000000aa.lock"), "{names:?}");
        assert!(
            !names.contains("00000000000000aa.00000000000000ff.tmp"),
            "{names:?}"
        );
        assert!(names.contains("00000000000000bb.lock"), "{names:?}");
    }
}
