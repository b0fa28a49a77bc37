//! A scan's plan as data that travels: per file, the footer planning read and the row
//! groups it kept with their row selections, plus what reading binds against (projection,
//! filter, declared schema, partition values). The in-process read consumes one; a Spark
//! task receives one per file as bytes ([`TaskPlan::to_bytes`]) and reads it without
//! planning again or fetching the footer — the plan is built once, on the driver, and
//! passed along (Databend's partitions carry their block metadata the same way).
//!
//! The encoding is versioned and checked on load: a magic tag, a format version, a CRC-32
//! of the rest, the plan (postcard), then each file's footer as the Parquet metadata
//! writer encodes it, cut to the row groups to read and their offset indexes (what reading
//! needs of the page index), so that a file's plans together weigh about its footer, however
//! many tasks share it; the row groups' numbers in the file travel in the plan. No storage
//! option travels in it: a task is given those apart, so credentials never sit in a plan.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_task_plan_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("id", std::sync::Arc::new(arrow::array::Int32Array::from((0..100).collect::<Vec<i32>>())) as _)]).unwrap();
//! # let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(25)).build();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::planning::scan::{Scan, ScanOptions};
//! use pqsift::planning::task_plan::TaskPlan;
//! use pqsift::storage::Storage;
//!
//! let scan = Scan::new(vec![path], None, Some("id >= 60"), ScanOptions::default()).unwrap();
//! let plan = scan.plan().unwrap();
//! // The driver: the file's surviving row groups (2 and 3), as bytes.
//! let bytes = TaskPlan::of_scan(&scan, &plan, &[(0, vec![2, 3])]).unwrap().to_bytes().unwrap();
//! // A task: the same plan back, no file opened; its footer holds those two row groups.
//! let task = TaskPlan::from_bytes(&bytes, &Storage::default()).unwrap();
//! let file = &task.files[0];
//! assert_eq!(file.file.metadata.num_row_groups(), 2);
//! let numbers: Vec<usize> = file.row_groups.iter().map(|&(index, _)| file.file.row_group_number(index)).collect();
//! assert_eq!(numbers, [2, 3]);
//! assert_eq!(task.filter.unwrap().to_string(), "`id` >= 60");
//! ```

use std::sync::Arc;

use bytes::Bytes;
use parquet::file::metadata::page_index::{PageIndexBuilder, PageIndexProvider};
use parquet::file::metadata::{
    PageIndexPolicy, ParquetMetaData, ParquetMetaDataBuilder, ParquetMetaDataReader, ParquetMetaDataWriter,
};
use serde::{Deserialize, Serialize};

use crate::error::{PqsiftError, Result};
use crate::filter::{BindOptions, Expr, parse_filter};
use crate::format::metadata_cache::Measured;
use crate::format::opener::OpenedFile;
use crate::planning::access_plan::RowGroupAccess;
use crate::planning::scan::{Scan, ScanPlan};
use crate::selection::{RowSelection, RowSelector};
use crate::storage::location::ObjectVersion;
use crate::storage::{Location, Storage};
use crate::table::partition_values::PartitionValues;
use crate::table::schema_adapter::DeclaredSchema;

/// What a read reads of one file, before its footer is opened: a [`PlannedFile`] to be.
#[derive(Debug, Clone)]
pub struct FileReads {
    /// The file's position in the scan.
    pub position: usize,
    /// The row groups to read, in file order, each with the rows to read (`None`: all).
    pub row_groups: Vec<(usize, Option<RowSelection>)>,
    /// The layout of the footer the plan was made on (see
    /// [`OpenedFile::layout_fingerprint`]), when known: the footer opened to read the file
    /// must have the same.
    pub layout: Option<u64>,
}

/// One file of a [`TaskPlan`]: its footer and the row groups to read.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    /// The file, its footer and page index read.
    pub file: Arc<OpenedFile>,
    /// The row groups to read, in file order, each with the rows to read (`None`: all).
    pub row_groups: Vec<(usize, Option<RowSelection>)>,
}

/// What reading a planned scan (or a piece of one) needs, and nothing it must decide again.
#[derive(Debug, Clone)]
pub struct TaskPlan {
    /// The projected columns (`None`: all).
    pub columns: Option<Vec<String>>,
    /// The scan's filter, not yet specialised to any file's partition values.
    pub filter: Option<Expr>,
    /// How the filter and the projection bind.
    pub bind: BindOptions,
    /// The schema every file is read into, when the scan has one (see [`Scan::declared`]).
    pub declared: Option<Arc<DeclaredSchema>>,
    /// The partition values of [`TaskPlan::files`], one row per file.
    pub partitions: Option<PartitionValues>,
    /// The files, in scan order.
    pub files: Vec<PlannedFile>,
}

impl TaskPlan {
    /// The plan of reading `pieces` of `scan` — `(file position, row group indices)` — as
    /// `plan` (a plan of `scan`) decided them: each row group with its selection. A row
    /// group the plan skips, or one the file lacks, is an error (the caller cut the pieces
    /// from another plan). A piece with no row group keeps its file (for its schema).
    pub fn of_scan(scan: &Scan, plan: &ScanPlan, pieces: &[(usize, Vec<usize>)]) -> Result<Self> {
        Self::of_row_groups(scan, Self::row_groups_of(plan, pieces)?)
    }

    /// The row groups `pieces` name — `(file position, row group indices)` — each with the
    /// rows `plan` reads of it, checked as [`TaskPlan::of_scan`] says: what a plan of those
    /// pieces holds but the footers.
    pub fn row_groups_of(plan: &ScanPlan, pieces: &[(usize, Vec<usize>)]) -> Result<Vec<FileReads>> {
        let mut selected = Vec::with_capacity(pieces.len());
        for (position, row_groups) in pieces {
            let file_plan = plan.files.get(*position).ok_or_else(|| {
                PqsiftError::TaskPlan(format!("no file at position {position} of a scan of {}", plan.files.len()))
            })?;
            let row_groups = row_groups
                .iter()
                .map(|&index| {
                    let access = file_plan.row_groups.get(index).map(|rg| &rg.access);
                    match access {
                        Some(RowGroupAccess::Scan) => Ok((index, None)),
                        Some(RowGroupAccess::Selection(selection)) => Ok((index, Some(selection.clone()))),
                        Some(RowGroupAccess::Skip) | None => Err(PqsiftError::TaskPlan(format!(
                            "row group {index} of {} is not one the plan reads",
                            file_plan.path
                        ))),
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            selected.push(FileReads { position: *position, row_groups, layout: file_plan.footer_layout });
        }
        Ok(selected)
    }

    /// The plan of reading `selected` (from [`TaskPlan::row_groups_of`]) of `scan`: the
    /// files' footers opened (read again if the scan let them go), each checked against
    /// the footer the plan was made on — a file rewritten since is refused, not read with
    /// its old version's row groups and page selections.
    pub fn of_row_groups(scan: &Scan, selected: Vec<FileReads>) -> Result<Self> {
        let positions: Vec<usize> = selected.iter().map(|file| file.position).collect();
        scan.open_concurrently(&positions, 1);
        let files = selected
            .into_iter()
            .map(|FileReads { position, row_groups, layout }| {
                let file = scan.open(position)?;
                if layout.is_some_and(|layout| layout != file.layout) {
                    return Err(PqsiftError::corrupt(
                        &file.location,
                        "its row groups changed after the scan was planned: plan the scan again",
                    ));
                }
                Ok(PlannedFile { file, row_groups })
            })
            .collect::<Result<Vec<_>>>()?;
        Self::of_files(scan, &positions, files)
    }

    /// The plan of reading no row of `scan`, its first file's footer alone (no file
    /// without files, or when the table declares its schema): what its output schema comes
    /// from, with nothing planned.
    pub fn schema_only(scan: &Scan) -> Result<Self> {
        // A table's declared schema is the output's: no footer needed.
        match scan.files().is_empty() || scan.declared().is_some() {
            true => Self::of_files(scan, &[], Vec::new()),
            false => Self::of_files(scan, &[0], vec![PlannedFile { file: scan.open(0)?, row_groups: Vec::new() }]),
        }
    }

    /// `files`, the files of `scan` at `positions`, with what reading binds against.
    fn of_files(scan: &Scan, positions: &[usize], files: Vec<PlannedFile>) -> Result<Self> {
        Ok(Self {
            columns: scan.columns().map(<[String]>::to_vec),
            filter: scan.filter().cloned(),
            bind: scan.options().bind.clone(),
            declared: scan.declared().map(|d| d.select(positions).map(Arc::new)).transpose()?,
            partitions: scan.table().partitions.as_ref().map(|p| p.select(positions)).transpose()?,
            files,
        })
    }

    /// The plan as bytes, to be read back by [`TaskPlan::from_bytes`] (in another process,
    /// by the same pqsift version). A footer the Parquet writer cannot encode travels
    /// without it: the task then reads it from the file.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut footers = Vec::new();
        let mut files = Vec::with_capacity(self.files.len());
        for planned in &self.files {
            let mut footer = Vec::new();
            let travelling = travelling_metadata(planned);
            let written =
                ParquetMetaDataWriter::new(&mut footer, &travelling).with_preserve_page_index_locations(false);
            let footer_len = match written.finish() {
                Ok(()) => {
                    footers.extend_from_slice(&footer);
                    Some(footer.len() as u64)
                }
                Err(_) => None,
            };
            files.push(WireFile {
                location: WireLocation::of(&planned.file.location),
                footer_len,
                row_groups: planned
                    .row_groups
                    .iter()
                    .map(|(index, selection)| WireRowGroup {
                        index: *index as u64,
                        selection: selection
                            .as_ref()
                            .map(|s| s.iter_runs().map(|run| (run.skip, run.row_count as u64)).collect()),
                    })
                    .collect(),
            });
        }
        let wire = Wire {
            columns: self.columns.clone(),
            filter: self.filter.as_ref().map(ToString::to_string),
            session_time_zone: self.bind.session_time_zone.clone(),
            case_sensitive: self.bind.case_sensitive,
            declared: self.declared.as_ref().map(|d| (d.to_text(), d.requested.clone())),
            fills: self.declared.as_ref().and_then(|d| d.fills.as_ref()).map(wire_values),
            deletes: self
                .declared
                .as_ref()
                .and_then(|d| d.deletes.as_ref())
                .map(|d| d.iter().map(|e| e.as_ref().map(ToString::to_string)).collect()),
            partitions: self.partitions.as_ref().map(wire_values),
            files,
        };
        seal(MAGIC, &wire, &footers)
    }

    /// The plan [`TaskPlan::to_bytes`] wrote, its files' object store clients built with
    /// `storage`'s options. Checked: the tag, the format version, the checksum, every
    /// footer, and every row group and selection against its footer.
    pub fn from_bytes(bytes: &[u8], storage: &Storage) -> Result<Self> {
        let invalid = |reason: String| PqsiftError::TaskPlan(reason);
        let (wire, footers): (Wire, &[u8]) = unseal(MAGIC, "task plan", bytes)?;
        let mut footers = Bytes::copy_from_slice(footers);

        let bind = BindOptions { session_time_zone: wire.session_time_zone, case_sensitive: wire.case_sensitive };
        let filter = wire.filter.as_deref().map(parse_filter).transpose()?;
        let declared = wire
            .declared
            .map(|(text, requested)| {
                let mut declared = DeclaredSchema::from_text("the task plan's schema", &text)?;
                if !requested.is_empty() && requested.len() != declared.schema.fields().len() {
                    return Err(invalid("requested fields that do not match its schema".into()));
                }
                declared.requested = requested;
                declared.fills =
                    wire.fills.map(|(schema, rows)| PartitionValues::from_text(&schema, &rows)).transpose()?;
                declared.deletes = wire
                    .deletes
                    .map(|d| d.iter().map(|e| e.as_deref().map(parse_filter).transpose()).collect::<Result<Vec<_>>>())
                    .transpose()?;
                let counts =
                    [declared.fills.as_ref().map(PartitionValues::len), declared.deletes.as_ref().map(Vec::len)];
                if counts.iter().flatten().any(|&n| n != wire.files.len()) {
                    return Err(invalid("fills or deletes of another number of files".into()));
                }
                Ok(Arc::new(declared))
            })
            .transpose()?;
        let partitions =
            wire.partitions.map(|(schema, rows)| PartitionValues::from_text(&schema, &rows)).transpose()?;
        if partitions.as_ref().is_some_and(|p| p.len() != wire.files.len()) {
            return Err(invalid("partition values of another number of files".into()));
        }
        let mut files = Vec::with_capacity(wire.files.len());
        for file in wire.files {
            let location = file.location.into_location(storage)?;
            let numbers = file
                .row_groups
                .iter()
                .map(|rg| usize::try_from(rg.index).map_err(|_| invalid(format!("row group {}", rg.index))))
                .collect::<Result<Vec<_>>>()?;
            let (opened, travelled) = match file.footer_len {
                Some(len) => {
                    let len = usize::try_from(len)
                        .ok()
                        .filter(|&len| len <= footers.len())
                        .ok_or_else(|| invalid(format!("a footer of {len} bytes where {} are left", footers.len())))?;
                    let mut opened = decode_footer(location, footers.split_to(len))?;
                    // It holds the row groups read, in the plan's order: their numbers in
                    // the file are kept apart.
                    if opened.metadata.num_row_groups() != numbers.len() {
                        return Err(invalid(format!(
                            "a footer of {} row groups for {} to read",
                            opened.metadata.num_row_groups(),
                            numbers.len()
                        )));
                    }
                    opened.row_group_numbers = Some(numbers.clone().into());
                    (opened, true)
                }
                // The footer did not travel: read it, as a scan would.
                None => (OpenedFile::open(&location)?, false),
            };
            let rows = opened.row_group_rows();
            let row_groups = file
                .row_groups
                .into_iter()
                .zip(numbers)
                .enumerate()
                .map(|(at, (rg, number))| {
                    let index = if travelled { at } else { number };
                    if index >= rows.len() {
                        return Err(invalid(format!(
                            "row group {number} of {}, which has {}",
                            opened.name(),
                            rows.len()
                        )));
                    }
                    let selection = rg.selection.map(|runs| selection_of(&runs, rows[index], &opened)).transpose()?;
                    Ok((index, selection))
                })
                .collect::<Result<Vec<_>>>()?;
            files.push(PlannedFile { file: Arc::new(opened), row_groups });
        }
        if !footers.is_empty() {
            return Err(invalid(format!("{} bytes after the last footer", footers.len())));
        }
        Ok(Self { columns: wire.columns, filter, bind, declared, partitions, files })
    }
}

/// The tag of a task plan's bytes.
const MAGIC: &[u8; 8] = b"PQSFTASK";
/// A tag, the format version (u16), a CRC-32 of what follows it (u32), the body's length
/// (u64): all little-endian.
const HEADER_LEN: usize = 8 + 2 + 4 + 8;
/// Raised when the encoding changes (of a task plan or a table piece): bytes from another
/// pqsift version are refused.
const FORMAT_VERSION: u16 = 3;

/// `body` (postcard) then `trailer` behind a header of `tag` (see [`HEADER_LEN`]): what
/// [`unseal`] reads back, checked.
pub(crate) fn seal(tag: &[u8; 8], body: &impl Serialize, trailer: &[u8]) -> Result<Vec<u8>> {
    let body = postcard::to_allocvec(body).map_err(|e| PqsiftError::TaskPlan(format!("cannot encode: {e}")))?;
    let mut out = Vec::with_capacity(HEADER_LEN + body.len() + trailer.len());
    out.extend_from_slice(tag);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // the checksum, below
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(trailer);
    let checksum = crc32fast::hash(&out[HEADER_LEN - 8..]);
    out[tag.len() + 2..tag.len() + 6].copy_from_slice(&checksum.to_le_bytes());
    Ok(out)
}

/// The body and trailer [`seal`] wrote with `tag` (a `what`, for errors), checked: the
/// tag, the format version, the checksum.
pub(crate) fn unseal<'a, T: Deserialize<'a>>(tag: &[u8; 8], what: &str, bytes: &'a [u8]) -> Result<(T, &'a [u8])> {
    let invalid = |reason: String| PqsiftError::TaskPlan(reason);
    if bytes.len() < HEADER_LEN || &bytes[..tag.len()] != tag {
        return Err(invalid(format!("not a pqsift {what} (no {} tag)", String::from_utf8_lossy(tag))));
    }
    let version = u16::from_le_bytes([bytes[tag.len()], bytes[tag.len() + 1]]);
    if version != FORMAT_VERSION {
        return Err(invalid(format!(
            "format version {version}, where this pqsift reads version {FORMAT_VERSION}: the driver and the workers run different pqsift versions"
        )));
    }
    let stored = u32::from_le_bytes(bytes[tag.len() + 2..tag.len() + 6].try_into().expect("4 bytes"));
    if crc32fast::hash(&bytes[HEADER_LEN - 8..]) != stored {
        return Err(invalid("its checksum does not match: damaged in transit".into()));
    }
    let body_len = u64::from_le_bytes(bytes[HEADER_LEN - 8..HEADER_LEN].try_into().expect("8 bytes"));
    let rest = &bytes[HEADER_LEN..];
    let body_len = usize::try_from(body_len)
        .ok()
        .filter(|&len| len <= rest.len())
        .ok_or_else(|| invalid(format!("a {what} of {body_len} bytes in {} bytes", rest.len())))?;
    let body = postcard::from_bytes(&rest[..body_len]).map_err(|e| invalid(format!("cannot decode: {e}")))?;
    Ok((body, &rest[body_len..]))
}

/// Values per file (partition values, fills) on the wire: `(name, Spark type)` pairs and
/// per file the values as canonical text, as [`PartitionValues::from_text`] reads them.
pub(crate) type WireValues = (Vec<(String, String)>, Vec<Vec<Option<String>>>);

pub(crate) fn wire_values(values: &PartitionValues) -> WireValues {
    (values.type_names(), (0..values.len()).map(|row| values.row_text(row)).collect())
}

#[derive(Serialize, Deserialize)]
struct Wire {
    columns: Option<Vec<String>>,
    /// Canonical Spark SQL, which parses back to the same expression.
    filter: Option<String>,
    session_time_zone: String,
    case_sensitive: bool,
    /// `DeclaredSchema::to_text` and the fields requested.
    declared: Option<(String, Vec<bool>)>,
    /// `(name, Spark type)` pairs and per file the values as canonical text.
    partitions: Option<WireValues>,
    /// The declared schema's fills (see `DeclaredSchema::fills`), as `partitions`.
    fills: Option<WireValues>,
    /// The declared schema's per-file delete predicates, as canonical Spark SQL.
    deletes: Option<Vec<Option<String>>>,
    files: Vec<WireFile>,
}

#[derive(Serialize, Deserialize)]
struct WireFile {
    location: WireLocation,
    /// The length of the file's footer among the footers after the plan; `None`: not there.
    footer_len: Option<u64>,
    row_groups: Vec<WireRowGroup>,
}

#[derive(Serialize, Deserialize)]
struct WireRowGroup {
    /// Its index in the file (the travelling footer holds the file's row groups read, in
    /// the order of these).
    index: u64,
    /// Runs of `(skipped, rows)`; `None`: every row.
    selection: Option<Vec<(bool, u64)>>,
}

/// A location without its store client (built again, with the task's storage options),
/// an object's size and version kept so that reading it needs no `HEAD`.
#[derive(Serialize, Deserialize, PartialEq, Clone)]
pub(crate) enum WireLocation {
    /// A local path's bytes (any file name, UTF-8 or not).
    Local(Vec<u8>),
    Object {
        url: String,
        size: u64,
        e_tag: Option<String>,
        last_modified_ns: i64,
    },
}

impl WireLocation {
    pub(crate) fn of(location: &Location) -> Self {
        match location {
            Location::Local(path) => Self::Local(path_bytes(path)),
            object => {
                let version = object.known_version();
                Self::Object {
                    url: object.to_string(),
                    size: version.map_or(0, |v| v.size),
                    e_tag: version.and_then(|v| v.e_tag.clone()),
                    last_modified_ns: version.map_or(0, |v| v.last_modified_ns),
                }
            }
        }
    }

    pub(crate) fn into_location(self, storage: &Storage) -> Result<Location> {
        match self {
            Self::Local(bytes) => Ok(Location::Local(path_from_bytes(bytes))),
            Self::Object { url, size, e_tag, last_modified_ns } => {
                let location = Location::parse(&url, storage)?;
                Ok(location.with_version(ObjectVersion { size, e_tag, last_modified_ns }))
            }
        }
    }
}

#[cfg(unix)]
fn path_bytes(path: &std::path::Path) -> Vec<u8> {
    std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec()
}

#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> std::path::PathBuf {
    <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(bytes).into()
}

#[cfg(not(unix))]
fn path_bytes(path: &std::path::Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> std::path::PathBuf {
    String::from_utf8_lossy(&bytes).into_owned().into()
}

/// The metadata of `planned`'s file a task needs: the footer with only the row groups it
/// reads (in the plan's order), and of the page index only their offset indexes (where
/// pages start, to skip them). The other row groups' metadata, the column indexes (pages'
/// minimum and maximum, which served planning) and the other offset indexes would make a
/// file's plans together its footer times its tasks.
fn travelling_metadata(planned: &PlannedFile) -> ParquetMetaData {
    let metadata = planned.file.metadata.as_ref();
    let read: Vec<usize> = planned.row_groups.iter().map(|&(index, _)| index).collect();
    let row_groups = read.iter().map(|&index| metadata.row_group(index).clone()).collect();
    let travelling = ParquetMetaDataBuilder::new(metadata.file_metadata().clone()).set_row_groups(row_groups);
    let Some(index) = metadata.page_index() else { return travelling.build() };
    let columns = metadata.file_metadata().schema_descr().num_columns();
    let mut kept = PageIndexBuilder::default();
    kept.allocate_offset_indexes(read.len(), columns);
    for (at, &row_group) in read.iter().enumerate() {
        for column in 0..columns {
            if let Some(offsets) = index.offset_index(row_group, column) {
                kept.put_offset_index(offsets.clone(), at, column);
            }
        }
    }
    let kept: Arc<dyn PageIndexProvider> = Arc::new(kept.build());
    travelling.set_page_index(Some(kept)).build()
}

/// The file at `location` with the footer (and page index) `footer` holds.
fn decode_footer(location: Location, footer: Bytes) -> Result<OpenedFile> {
    let metadata = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .parse_and_finish(&footer)
        .map_err(|e| PqsiftError::corrupt(&location, format!("its footer in the task plan does not decode: {e}")))?;
    let Measured { schema, footer_bytes, layout } = Measured::of(&metadata);
    let schema = schema.map_err(|e| PqsiftError::corrupt(&location, e))?;
    Ok(OpenedFile {
        location,
        metadata: Arc::new(metadata),
        schema,
        tail_bytes: None,
        footer_bytes,
        layout,
        row_group_numbers: None,
    })
}

/// The selection of `runs` over a row group of `rows` rows of `file`.
fn selection_of(runs: &[(bool, u64)], rows: usize, file: &OpenedFile) -> Result<RowSelection> {
    let runs = runs
        .iter()
        .map(|&(skip, count)| {
            let row_count = usize::try_from(count).map_err(|_| PqsiftError::TaskPlan("a run too long".into()))?;
            Ok(RowSelector { row_count, skip })
        })
        .collect::<Result<Vec<_>>>()?;
    let selection = RowSelection::from_runs(runs)?;
    if selection.row_count() != rows {
        return Err(PqsiftError::TaskPlan(format!(
            "a selection of {} rows for a row group of {rows} in {}",
            selection.row_count(),
            file.name()
        )));
    }
    Ok(selection)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with_row_groups(name: &str) -> std::path::PathBuf {
        file_of_row_groups(name, 250)
    }

    /// 1,000 ids in row groups of `rows`, pages of 50.
    fn file_of_row_groups(name: &str, rows: usize) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("pqsift_task_plan_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let ids = arrow::array::Int64Array::from((0..1000).collect::<Vec<i64>>());
        let batch = arrow::array::RecordBatch::try_from_iter([("id", Arc::new(ids) as _)]).unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(rows))
            .set_data_page_row_count_limit(50)
            .set_write_batch_size(50)
            .build();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props))
                .unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        path
    }

    fn planned(path: &std::path::Path, filter: &str) -> (Scan, ScanPlan) {
        let scan =
            Scan::new(vec![path.to_path_buf()], None, Some(filter), crate::planning::scan::ScanOptions::default())
                .unwrap();
        let plan = scan.plan().unwrap();
        (scan, plan)
    }

    #[test]
    fn a_plan_round_trips_with_its_page_selections() {
        let path = file_with_row_groups("round_trip.parquet");
        let (scan, plan) = planned(&path, "id BETWEEN 260 AND 280 OR id > 990");
        let kept: Vec<usize> = plan.files[0].surviving().collect();
        assert_eq!(kept, [1, 3]);
        let task = TaskPlan::of_scan(&scan, &plan, &[(0, kept)]).unwrap();
        let back = TaskPlan::from_bytes(&task.to_bytes().unwrap(), &Storage::default()).unwrap();
        // The footer travelled with the row groups read alone, their numbers in the file apart.
        let (sent, got) = (&task.files[0], &back.files[0]);
        assert_eq!(got.file.metadata.num_row_groups(), 2);
        assert_eq!(got.file.row_group_numbers.as_deref(), Some(&[1, 3][..]));
        let numbers =
            |f: &PlannedFile| f.row_groups.iter().map(|&(i, _)| f.file.row_group_number(i)).collect::<Vec<_>>();
        assert_eq!(numbers(got), [1, 3]);
        assert_eq!(numbers(sent), [1, 3]);
        for (&(at, _), &(index, _)) in got.row_groups.iter().zip(&sent.row_groups) {
            let (travelled, in_file) = (got.file.metadata.row_group(at), sent.file.metadata.row_group(index));
            assert_eq!(travelled.num_rows(), in_file.num_rows());
            assert_eq!(travelled.column(0).data_page_offset(), in_file.column(0).data_page_offset());
        }
        let selections = |f: &PlannedFile| f.row_groups.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>();
        assert_eq!(selections(got), selections(sent));
        // The page index travelled: row group 1's selection is pages, not all its rows.
        assert!(got.row_groups[0].1.as_ref().is_some_and(|s| s.selected_count() < 250));
        // Of the page index, only the offset indexes of the row groups read travelled.
        let index = got.file.metadata.page_index().expect("offset indexes");
        assert!(index.offset_index(0, 0).is_some() && index.offset_index(1, 0).is_some());
        assert!(index.column_index(0, 0).is_none() && index.column_index(1, 0).is_none());
        let all = TaskPlan::of_scan(&scan, &plan, &[(0, vec![1, 3])]).unwrap().to_bytes().unwrap().len();
        let one = TaskPlan::of_scan(&scan, &plan, &[(0, vec![3])]).unwrap().to_bytes().unwrap().len();
        assert!(one < all, "{one} bytes for one row group, {all} for two");
        assert_eq!(back.filter, task.filter);
        assert_eq!(back.files[0].file.schema, task.files[0].file.schema);
    }

    #[test]
    fn a_files_plans_together_weigh_about_its_footer() {
        let path = file_of_row_groups("many.parquet", 50);
        let (scan, plan) = planned(&path, "id >= 0");
        let row_groups: Vec<usize> = plan.files[0].surviving().collect();
        assert_eq!(row_groups.len(), 20);
        let bytes = |pieces: Vec<usize>| TaskPlan::of_scan(&scan, &plan, &[(0, pieces)]).unwrap().to_bytes().unwrap();
        let whole = bytes(row_groups.clone()).len();
        let empty = bytes(Vec::new()).len();
        let apart: usize = row_groups.iter().map(|&rg| bytes(vec![rg]).len()).sum();
        // A plan per row group: the row groups once, the rest (schema, options) in each, and
        // a few bytes of numbers; not the whole footer in each.
        let n = row_groups.len();
        assert!(
            apart <= whole + (n - 1) * empty + 8 * n,
            "{apart} bytes in {n} plans, {whole} in one, {empty} in none"
        );
    }

    #[test]
    fn damaged_or_foreign_bytes_are_refused() {
        let path = file_with_row_groups("damaged.parquet");
        let (scan, plan) = planned(&path, "id > 990");
        let bytes = TaskPlan::of_scan(&scan, &plan, &[(0, vec![3])]).unwrap().to_bytes().unwrap();
        let refused = |bytes: &[u8]| match TaskPlan::from_bytes(bytes, &Storage::default()) {
            Err(PqsiftError::TaskPlan(reason)) => reason,
            other => panic!("expected a task plan error, got {other:?}"),
        };
        assert!(refused(b"PAR1").contains("not a pqsift task plan"));
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(refused(&flipped).contains("checksum"));
        let mut newer = bytes.clone();
        newer[8] = FORMAT_VERSION as u8 + 1;
        assert!(refused(&newer).contains(&format!("format version {}", FORMAT_VERSION + 1)));
        assert!(refused(&bytes[..bytes.len() - 10]).contains("checksum"));
    }

    #[test]
    fn a_row_group_the_plan_skips_is_not_a_task() {
        let path = file_with_row_groups("skipped.parquet");
        let (scan, plan) = planned(&path, "id > 990");
        assert!(matches!(TaskPlan::of_scan(&scan, &plan, &[(0, vec![0])]), Err(PqsiftError::TaskPlan(_))));
        assert!(matches!(TaskPlan::of_scan(&scan, &plan, &[(1, vec![])]), Err(PqsiftError::TaskPlan(_))));
    }
}
