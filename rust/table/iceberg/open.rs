//! An Iceberg snapshot as a scan's [`Table`]: its live data files (from the manifest list
//! and its manifests, read concurrently), their identity partition values, the declared
//! schema (field ids, name mapping, initial defaults) and per file its manifest entry.
//!
//! Locations in the metadata are resolved against the table root the scan was given:
//! one below the location the metadata records for the table is taken relative to it, so
//! a table moved (or copied) after it was written reads its own files; any other must be
//! absolute and is allowed only as [`AllowedLocations`] says.
//!
//! ```no_run
//! use pqsift::table::iceberg::metadata::IcebergSnapshotSpec;
//! use pqsift::reading::table_reads::ScanReads;
//! use pqsift::table::iceberg::open::{IcebergOpen, open_iceberg_table};
//! let root = std::path::Path::new("/warehouse/db/events").into();
//! let (allowed, selection) = (Default::default(), Default::default());
//! let open = IcebergOpen::snapshot(IcebergSnapshotSpec::Current, &allowed, &selection);
//! let table = open_iceberg_table(&root, &open, &ScanReads).unwrap();
//! println!("{} data files", table.files.len());
//! ```

use std::sync::Arc;

use std::collections::HashMap;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use roaring::RoaringTreemap;

use super::avro::SchemaCache;
use super::deletes::{balanced, deleted_rows_predicate};
use super::manifest::{DataFile, FileContent, ManifestFile, read_manifest, read_manifest_list};
use super::manifest_cache::{ManifestCache, ManifestKey};
use super::metadata::{
    IcebergSnapshotSpec, PartitionField, PartitionSpec, TableMetadata, current_metadata_file, named_metadata_file,
    spec_fields,
};
use super::schema::{arrow_schema, name_mapping, stored_type};
use super::statistics::prune_manifests;
use super::table::{DeferredManifest, DeferredManifests, IcebergReadMetrics, IcebergTable, ManifestSelection};
use super::transforms::Transform;
use super::values::{as_declared, partition_array};
use crate::error::{PqsiftError, Result};
use crate::filter::{BindOptions, Expr};
use crate::storage::FileSource;
use crate::storage::Location;
use crate::storage::source::{read_all, read_many};
use crate::table::allowed_locations::{AllowedLocations, LocationCheck};
use crate::table::column_matching::field_id;
use crate::table::delta::deletion_vector::stored_vector;
use crate::table::delta::schema::ColumnMappingMode;
use crate::table::parquet_reads::ParquetReads;
use crate::table::partition_values::PartitionValues;
use crate::table::resolved::{Table, TableFormat};
use crate::table::schema_adapter::DeclaredSchema;
use parquet::file::reader::Length;

/// What opening an Iceberg table takes besides its location: which snapshot, from which
/// metadata file, the scan's filter and which manifests to read (see
/// [`open_iceberg_table`]).
#[derive(Debug, Clone, Copy)]
pub struct IcebergOpen<'a> {
    /// The snapshot read.
    pub snapshot: IcebergSnapshotSpec,
    /// A metadata file of the root to read instead of the current one (`3`, `v3`,
    /// `00003-…`).
    pub version: Option<&'a str>,
    /// A store's recursive listing of the root, when finding the table made one: its
    /// metadata files are found there, without a listing of their own.
    pub listed: Option<&'a [Location]>,
    /// Where files outside the table's root may be.
    pub allowed: &'a AllowedLocations,
    /// The scan's filter, when known: the data manifests whose partition summaries rule it
    /// out are not read.
    pub filter: Option<(&'a Expr, &'a BindOptions)>,
    /// Which of the other manifests are read.
    pub selection: &'a ManifestSelection,
}

impl<'a> IcebergOpen<'a> {
    /// The snapshot `snapshot` from the current metadata file, no listing, no filter.
    pub fn snapshot(
        snapshot: IcebergSnapshotSpec,
        allowed: &'a AllowedLocations,
        selection: &'a ManifestSelection,
    ) -> Self {
        Self { snapshot, version: None, listed: None, allowed, filter: None, selection }
    }
}

/// Opens the snapshot `open` names of the Iceberg table at `source` — its root, or one of
/// its metadata files — as a [`Table`]. Equality delete files are read through `reads`.
pub fn open_iceberg_table(source: &Location, open: &IcebergOpen<'_>, reads: &dyn ParquetReads) -> Result<Table> {
    let IcebergOpen { snapshot: spec, version, listed, allowed, filter, selection } = *open;
    let (root, metadata_file) = match source.file_name() {
        Some(name) if super::metadata::is_metadata_file(&name) => {
            let root = source
                .parent()
                .and_then(|metadata| metadata.parent())
                .ok_or_else(|| PqsiftError::table(source, "a metadata file outside a table's metadata/ directory"))?;
            (root, source.clone())
        }
        _ => match version {
            Some(version) => (source.clone(), named_metadata_file(source, version, listed)?),
            None => (source.clone(), current_metadata_file(source, listed)?),
        },
    };
    let bytes = read_all(&metadata_file).map_err(|e| PqsiftError::table(&root, format!("{metadata_file}: {e}")))?;
    let metadata = TableMetadata::parse(&root, &metadata_file, &bytes)?;
    let paths = Paths::new(root.clone(), normalised(&metadata.location).to_string(), allowed);
    let snapshot = metadata.snapshot(&root, spec)?;
    let specs: Arc<[PartitionSpec]> = metadata.specs().into();

    // The schema the snapshot was written with when travelling in time, else the current.
    let schema_json = match (spec, snapshot.and_then(|s| s.schema_id)) {
        (IcebergSnapshotSpec::Current, _) | (_, None) => metadata.current_schema(&root)?,
        (_, Some(id)) => metadata
            .schemas
            .iter()
            .find(|s| s.get("schema-id").and_then(serde_json::Value::as_i64) == Some(i64::from(id)))
            .map_or_else(|| metadata.current_schema(&root), Ok)?,
    };
    let mapping = metadata.properties.get("schema.name-mapping.default").and_then(|m| name_mapping(m));
    let schema = Arc::new(
        arrow_schema(schema_json, mapping.as_ref())
            .map_err(|e| PqsiftError::table(&root, format!("{metadata_file}: {e}")))?,
    );

    let mut read = IcebergReadMetrics::default();
    let mut files: Vec<DataFile> = Vec::new();
    let mut deletes: Vec<DataFile> = Vec::new();
    if let Some(snapshot) = snapshot {
        let manifests: Vec<ManifestFile> = match (&snapshot.manifest_list, &snapshot.manifests) {
            (Some(list), _) => {
                let location = paths.resolve(list, "manifest list")?;
                let bytes = read_all(&location).map_err(|e| PqsiftError::table(&root, format!("{location}: {e}")))?;
                read_manifest_list(&root, &location, &bytes)?
            }
            // Format 1 without a manifest list: each manifest names its spec itself.
            (None, Some(manifests)) => manifests
                .iter()
                .map(|path| ManifestFile {
                    path: path.clone(),
                    length: None,
                    spec_id: 0,
                    content: FileContent::Data,
                    sequence_number: 0,
                    partitions: Vec::new(),
                    live_files: None,
                })
                .collect(),
            (None, None) => Vec::new(),
        };
        read.manifests_total = manifests.len() as u64;
        // Data manifests whose partition summaries rule the filter out are not read.
        let manifests: Vec<ManifestFile> = match filter {
            Some((filter, bind)) => {
                let keep = prune_manifests(filter, &schema, &specs, &manifests, bind);
                manifests
                    .into_iter()
                    .zip(keep)
                    .filter(|(manifest, keep)| *keep || manifest.content != FileContent::Data)
                    .map(|(manifest, _)| manifest)
                    .collect()
            }
            None => manifests,
        };
        read.manifests_pruned = read.manifests_total - manifests.len() as u64;
        let is_data = |m: &ManifestFile| m.content == FileContent::Data;
        let manifests: Vec<ManifestFile> = match selection {
            ManifestSelection::All => manifests,
            ManifestSelection::DeferAbove(most) => {
                if manifests.iter().filter(|m| is_data(m)).count() > *most {
                    // Tasks read the data manifests, and the delete manifests with them.
                    let data: Vec<&ManifestFile> = manifests.iter().filter(|m| is_data(m)).collect();
                    let deferred = DeferredManifests {
                        manifests: data
                            .iter()
                            .map(|m| DeferredManifest { path: m.path.clone(), live_files: m.live_files })
                            .collect(),
                        mean_file_bytes: mean_file_bytes(&paths, data[0], snapshot.manifest_list.is_some())?,
                    };
                    read.manifests_read = 1;
                    let iceberg = IcebergTable {
                        table_root: root,
                        metadata_file,
                        format_version: metadata.format_version,
                        snapshot_id: Some(snapshot.snapshot_id),
                        specs,
                        files: Vec::new(),
                        deleted_positions: Vec::new(),
                        read,
                        deferred,
                    };
                    let declared = DeclaredSchema::new(schema, ColumnMappingMode::Id);
                    return Ok(iceberg_table(iceberg, declared, Vec::new()));
                }
                manifests
            }
            ManifestSelection::Stripe { manifests: named, .. } => {
                let named: std::collections::HashSet<&str> = named.iter().map(String::as_str).collect();
                manifests.into_iter().filter(|m| !is_data(m) || named.contains(m.path.as_str())).collect()
            }
        };
        let listed = snapshot.manifest_list.is_some();
        let (decoded, cached) = decode_manifests(&paths, &manifests, listed)?;
        read.manifests_read = manifests.len() as u64;
        read.manifests_cached = cached as u64;
        let mut data_position = 0;
        for file in decoded.iter().flat_map(|files| files.iter()) {
            match file.content {
                FileContent::Data => {
                    if selection.keeps(data_position) {
                        files.push(file.clone());
                    }
                    data_position += 1;
                }
                _ => deletes.push(file.clone()),
            }
        }
    }
    read.data_files = files.len() as u64;
    read.delete_files = deletes.len() as u64;
    let (positional, equality): (Vec<DataFile>, Vec<DataFile>) =
        deletes.into_iter().partition(|d| d.content == FileContent::PositionDeletes);
    let deleted_positions = position_deletes(&paths, &files, &positional, reads)?;
    if let Some(other) = files.iter().find(|f| f.format != "PARQUET") {
        return Err(PqsiftError::unsupported(
            &root.to_string(),
            format!("data file {} is {}, not Parquet", other.path, other.format),
        ));
    }
    let locations = files
        .iter()
        .map(|file| {
            let location = paths.resolve(&file.path, "data file")?;
            Ok(match (location.is_remote(), u64::try_from(file.file_size)) {
                (true, Ok(size)) if size > 0 => location.with_version(crate::storage::location::ObjectVersion {
                    size,
                    e_tag: None,
                    last_modified_ns: 0,
                }),
                _ => location,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut declared = DeclaredSchema::new(Arc::clone(&schema), ColumnMappingMode::Id);
    declared.fills = identity_partitions(&specs, &schema, &files)?;
    if !equality.is_empty() {
        declared.deletes = Some(equality_deletes(&paths, &specs, &schema, &files, &equality, reads)?);
    }
    let iceberg = IcebergTable {
        table_root: root,
        metadata_file,
        format_version: metadata.format_version,
        snapshot_id: snapshot.map(|s| s.snapshot_id),
        specs,
        files,
        deleted_positions,
        read,
        deferred: DeferredManifests::default(),
    };
    Ok(iceberg_table(iceberg, declared, locations))
}

/// The table reading `files` (those `iceberg` lists, resolved: none when its manifests are
/// deferred to tasks) in the schema `declared`.
fn iceberg_table(iceberg: IcebergTable, declared: DeclaredSchema, files: Vec<Location>) -> Table {
    Table {
        name: iceberg.table_root.to_string(),
        format: TableFormat::Iceberg,
        files,
        partitions: None,
        declared: Some(Arc::new(declared)),
        delta: None,
        iceberg: Some(Arc::new(iceberg)),
    }
}

/// The entries of `manifests` (of a manifest list if `listed`, which gives their specs),
/// and how many of them came from the process's [`ManifestCache`]: a manifest decoded by
/// an earlier scan is not read again, and one decoded here is kept for later scans.
fn decode_manifests(
    paths: &Paths,
    manifests: &[ManifestFile],
    listed: bool,
) -> Result<(Vec<Arc<Vec<DataFile>>>, usize)> {
    let root = &paths.root;
    let locations = manifests.iter().map(|m| paths.resolve(&m.path, "manifest")).collect::<Result<Vec<_>>>()?;
    let cache = ManifestCache::global();
    let spec_of = |m: &ManifestFile| listed.then_some(m.spec_id);
    let keys: Vec<Option<ManifestKey>> =
        manifests.iter().zip(&locations).map(|(m, l)| ManifestKey::of(l, m, spec_of(m))).collect();
    let mut decoded: Vec<Option<Arc<Vec<DataFile>>>> =
        keys.iter().map(|key| key.as_ref().and_then(|key| cache.get(key))).collect();
    let missing: Vec<usize> = (0..manifests.len()).filter(|&k| decoded[k].is_none()).collect();
    let to_read: Vec<Location> = missing.iter().map(|&k| locations[k].clone()).collect();
    let contents = read_many(&to_read).map_err(|e| PqsiftError::table(root, format!("reading manifests: {e}")))?;
    let schemas = SchemaCache::default();
    let decode = |i: usize| {
        crate::interrupt::check()?;
        let k = missing[i];
        let manifest = &manifests[k];
        read_manifest(root, &locations[k], &contents[i], spec_of(manifest), manifest.sequence_number, &schemas)
    };
    for (i, files) in in_parallel(missing.len(), decode)?.into_iter().enumerate() {
        let k = missing[i];
        let files = Arc::new(files);
        if let Some(key) = &keys[k] {
            cache.insert(key.clone(), Arc::clone(&files));
        }
        decoded[k] = Some(files);
    }
    let cached = manifests.len() - missing.len();
    Ok((decoded.into_iter().map(|files| files.expect("every manifest decoded")).collect(), cached))
}

/// The mean size of the data files `manifest` lists, read (and cached, as any manifest
/// a scan reads) to size the tasks that read a snapshot's deferred manifests (`None`: it
/// lists none).
fn mean_file_bytes(paths: &Paths, manifest: &ManifestFile, listed: bool) -> Result<Option<u64>> {
    let (decoded, _) = decode_manifests(paths, std::slice::from_ref(manifest), listed)?;
    let sizes: Vec<u64> = decoded[0].iter().map(|f| u64::try_from(f.file_size).unwrap_or(0)).collect();
    Ok((!sizes.is_empty()).then(|| sizes.iter().sum::<u64>() / sizes.len() as u64))
}

/// Per file, the values of its identity partitions, by the source column's name (null
/// where the file's spec has no identity partition of the column): what fills a column a
/// data file does not hold, as the spec's column projection says (a double column's value
/// some writers keep as a float is widened). `None` without identity partitions.
fn identity_partitions(
    specs: &[PartitionSpec],
    schema: &Schema,
    files: &[DataFile],
) -> Result<Option<PartitionValues>> {
    if files.is_empty() {
        return Ok(None);
    }
    let spec_fields: Vec<&[PartitionField]> = files.iter().map(|f| spec_fields(specs, f.spec_id)).collect();
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for field in schema.fields() {
        let Some(id) = field_id(field) else { continue };
        let indices: Vec<Option<usize>> = spec_fields
            .iter()
            .map(|fields| fields.iter().position(|p| p.source_id == id && p.transform == Transform::Identity))
            .collect();
        if indices.iter().all(Option::is_none) {
            continue;
        }
        let values: Vec<Option<&apache_avro::types::Value>> =
            files.iter().zip(&indices).map(|(file, k)| k.and_then(|k| file.partition.get(k))).collect();
        columns.push(as_declared(partition_array(&values, &stored_type(field)), field));
        fields.push(Field::new(field.name(), field.data_type().clone(), true));
    }
    if fields.is_empty() {
        return Ok(None);
    }
    Ok(Some(PartitionValues::with_rows(Arc::new(Schema::new(fields)), columns, files.len())?))
}

/// `decode(0..count)` on the machine's cores (manifests decode independently), in order.
fn in_parallel<T: Send>(count: usize, decode: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count.max(1));
    if threads <= 1 {
        return (0..count).map(decode).collect();
    }
    let decode = &decode;
    let chunks: Vec<Result<Vec<T>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let range = (count * t / threads)..(count * (t + 1) / threads);
                scope.spawn(move || range.map(decode).collect::<Result<Vec<T>>>())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(PqsiftError::Internal("a manifest decoder panicked".into()))))
            .collect()
    });
    Ok(chunks.into_iter().collect::<Result<Vec<_>>>()?.into_iter().flatten().collect())
}

/// Per data file, the positions its position deletes (format 2 delete files, format 3
/// deletion vectors) delete: a delete applies to the data file it names when its data
/// sequence number is not lower than the file's. `None` where none does.
fn position_deletes(
    paths: &Paths,
    files: &[DataFile],
    deletes: &[DataFile],
    reads: &dyn ParquetReads,
) -> Result<Vec<Option<Arc<RoaringTreemap>>>> {
    let mut deleted: Vec<RoaringTreemap> = vec![RoaringTreemap::new(); files.len()];
    if deletes.is_empty() {
        return Ok(vec![None; files.len()]);
    }
    let root = &paths.root;
    let by_path: HashMap<&str, Vec<usize>> = files.iter().enumerate().fold(HashMap::new(), |mut map, (i, f)| {
        map.entry(f.path.as_str()).or_default().push(i);
        map
    });
    let mut add = |path: &str, position: u64, sequence_number: i64| {
        for &i in by_path.get(path).into_iter().flatten() {
            if sequence_number >= files[i].sequence_number {
                deleted[i].insert(position);
            }
        }
    };
    for delete in deletes {
        crate::interrupt::check()?;
        let location = paths.resolve(&delete.path, "delete file")?;
        let corrupt = |reason: String| PqsiftError::table(root, format!("position delete file {location}: {reason}"));
        match delete.format.as_str() {
            "PUFFIN" => {
                let target = delete.referenced_data_file.as_deref().ok_or_else(|| {
                    corrupt("a deletion vector that names no data file (referenced_data_file)".into())
                })?;
                let (Some(offset), Some(size)) = (delete.content_offset, delete.content_size) else {
                    return Err(corrupt("a deletion vector without its offset and size".into()));
                };
                let (offset, size) = u64::try_from(offset)
                    .ok()
                    .zip(u64::try_from(size).ok())
                    .filter(|(_, size)| *size >= 8)
                    .ok_or_else(|| corrupt(format!("a deletion vector at offset {offset} of {size} bytes")))?;
                let file = FileSource::open(&location)?;
                if offset.checked_add(size).is_none_or(|end| end > file.len()) {
                    return Err(corrupt(format!(
                        "a deletion vector of {size} bytes at offset {offset} does not fit in the file's {} bytes",
                        file.len()
                    )));
                }
                let bytes = file.read(offset..offset + size)?;
                let vector = stored_vector(&bytes).map_err(|e| corrupt(format!("deletion vector: {e}")))?;
                for position in vector.iter() {
                    add(target, position, delete.sequence_number);
                }
            }
            "PARQUET" => {
                let read = reads.read_file(&location).map_err(|e| corrupt(e.to_string()))?;
                for batch in &read.batches {
                    let column =
                        |name: &str| batch.column_by_name(name).ok_or_else(|| corrupt(format!("no column {name:?}")));
                    let paths = arrow::compute::cast(column("file_path")?, &DataType::Utf8)?;
                    let positions = arrow::compute::cast(column("pos")?, &DataType::Int64)?;
                    let paths = paths.as_string::<i32>();
                    let positions = positions.as_primitive::<arrow::datatypes::Int64Type>();
                    for row in 0..batch.num_rows() {
                        if paths.is_null(row) || positions.is_null(row) || positions.value(row) < 0 {
                            return Err(corrupt(format!("row {row}: a null path or a negative position")));
                        }
                        add(paths.value(row), positions.value(row) as u64, delete.sequence_number);
                    }
                }
            }
            other => {
                return Err(PqsiftError::unsupported(&root.to_string(), format!("delete file {location} is {other}")));
            }
        }
    }
    Ok(deleted.into_iter().map(|d| (!d.is_empty()).then(|| Arc::new(d))).collect())
}

/// Per data file, the predicate its rows must meet for the equality deletes that apply to
/// it (see [`super::deletes`]), `None` where none does.
fn equality_deletes(
    paths: &Paths,
    specs: &[PartitionSpec],
    schema: &Schema,
    files: &[DataFile],
    deletes: &[DataFile],
    reads: &dyn ParquetReads,
) -> Result<Vec<Option<Expr>>> {
    let root = &paths.root;
    let partitioned = |spec_id: i32| !spec_fields(specs, spec_id).is_empty();
    let mut predicates = Vec::with_capacity(deletes.len());
    for delete in deletes {
        crate::interrupt::check()?;
        let location = paths.resolve(&delete.path, "delete file")?;
        if delete.format != "PARQUET" {
            return Err(PqsiftError::unsupported(
                &root.to_string(),
                format!("delete file {location} is {}, not Parquet", delete.format),
            ));
        }
        let read = reads.read_file(&location).map_err(|e| PqsiftError::table(root, format!("{location}: {e}")))?;
        let rows = match read.batches.first() {
            Some(first) => arrow::compute::concat_batches(&first.schema(), &read.batches)?,
            None => RecordBatch::new_empty(Arc::new(Schema::empty())),
        };
        let predicate = match rows.num_rows() {
            0 => None,
            _ => Some(
                deleted_rows_predicate(schema, &delete.equality_ids, &rows)
                    .map_err(|e| PqsiftError::table(root, format!("equality delete file {location}: {e}")))?,
            ),
        };
        predicates.push(predicate);
    }
    Ok(files
        .iter()
        .map(|file| {
            let applying: Vec<Expr> = deletes
                .iter()
                .zip(&predicates)
                .filter(|(delete, _)| {
                    delete.sequence_number > file.sequence_number
                        && (!partitioned(delete.spec_id)
                            || (delete.spec_id == file.spec_id && delete.partition == file.partition))
                })
                .filter_map(|(_, predicate)| predicate.clone())
                .collect();
            (!applying.is_empty()).then(|| balanced(applying, Expr::And))
        })
        .collect())
}

/// How the metadata's recorded locations become the scan's (see the module documentation).
struct Paths<'a> {
    root: Location,
    recorded: String,
    allowed: &'a AllowedLocations,
    /// `allowed` for this table.
    check: LocationCheck,
    /// See [`Paths::writers_base`]; found once, asked of every file outside the root.
    writers_base: Option<(String, Location)>,
}

impl<'a> Paths<'a> {
    fn new(root: Location, recorded: String, allowed: &'a AllowedLocations) -> Self {
        let check = allowed.for_table(&root);
        let mut paths = Self { root, recorded, allowed, check, writers_base: None };
        paths.writers_base = paths.writers_base();
        paths
    }

    fn resolve(&self, recorded: &str, what: &str) -> Result<Location> {
        let path = normalised(recorded);
        let location = match below(path, &self.recorded) {
            Some(relative) => joined(&self.root, relative),
            None => {
                match self.writers_base.as_ref().and_then(|(written, actual)| Some((below(path, written)?, actual))) {
                    Some((relative, base)) => joined(base, relative),
                    None => self.absolute(recorded, what)?,
                }
            }
        };
        self.check.check(&location, what)?;
        Ok(location)
    }

    /// Where the writer's locations were, and where that is now: the recorded location and
    /// the root share their last components (`db/events`); what comes before them in the
    /// recorded location (the writer's warehouse or working directory) is the root's
    /// matching ancestor now. `None` when they share none.
    fn writers_base(&self) -> Option<(String, Location)> {
        let recorded: Vec<&str> = self.recorded.split('/').collect();
        let mut base = self.root.clone();
        let mut shared = 0;
        while shared < recorded.len() {
            let name = base.file_name()?;
            if name != recorded[recorded.len() - 1 - shared] {
                break;
            }
            base = base.parent()?;
            shared += 1;
        }
        (shared > 0).then(|| (recorded[..recorded.len() - shared].join("/"), base))
    }

    fn url_refused(&self, recorded: &str, what: &str) -> PqsiftError {
        PqsiftError::table(
            &self.root,
            format!(
                "the {what} {recorded:?} is in an object store, outside the local table: allow its prefix with allowed_locations to read it"
            ),
        )
    }

    fn absolute(&self, recorded: &str, what: &str) -> Result<Location> {
        let path = normalised(recorded);
        if path.starts_with('/') && !recorded.contains("://") || recorded.starts_with("file:") {
            return Ok(Location::Local(crate::table::allowed_locations::lexically_normal(std::path::Path::new(path))));
        }
        match (&self.root, recorded.contains("://")) {
            (Location::Object(object), true) => Location::parse(recorded, object.storage()),
            // A local table naming objects in a store (metadata copied out of it): read
            // with the storage of an allowed prefix the URL is below, if any.
            (Location::Local(_), true) => {
                let AllowedLocations::Below(prefixes) = self.allowed else {
                    return Err(self.url_refused(recorded, what));
                };
                let below = |prefix: &Location| {
                    let prefix = prefix.to_string();
                    let prefix = prefix.trim_end_matches('/');
                    recorded.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                };
                prefixes
                    .iter()
                    .filter(|prefix| below(prefix))
                    .find_map(Location::as_object)
                    .map(|prefix| Location::parse(recorded, prefix.storage()))
                    .unwrap_or_else(|| Err(self.url_refused(recorded, what)))
            }
            _ => Err(PqsiftError::table(
                &self.root,
                format!(
                    "the {what} {recorded:?} is neither below the table's recorded location {:?} nor an absolute path",
                    self.recorded
                ),
            )),
        }
    }
}

/// `path` relative to `base` when it is below it (everything is below an empty base).
fn below<'a>(path: &'a str, base: &str) -> Option<&'a str> {
    if base.is_empty() {
        return (!path.starts_with('/') && !path.contains("://")).then_some(path);
    }
    path.strip_prefix(base)?.strip_prefix('/')
}

/// `relative` (`/`-separated, `..` allowed) below `base`.
fn joined(base: &Location, relative: &str) -> Location {
    relative.split('/').filter(|p| !p.is_empty() && *p != ".").fold(base.clone(), |l, p| match p {
        ".." => l.parent().unwrap_or(l),
        p => l.join(p),
    })
}

/// A recorded location without a `file:` scheme or a trailing slash.
fn normalised(location: &str) -> &str {
    let location = match location.strip_prefix("file:") {
        Some(rest) => match rest.strip_prefix("//") {
            Some(after) if after.starts_with('/') => after,
            Some(after) => after.strip_prefix("localhost").unwrap_or(after),
            None => rest,
        },
        None => location,
    };
    let location = location.trim_end_matches('/');
    location.strip_prefix("./").unwrap_or(location)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_locations_resolve_against_the_given_root() {
        let root = Location::from(std::path::Path::new("/moved/t"));
        let allowed = AllowedLocations::default();
        let paths = Paths::new(root.clone(), normalised("file:///old/t/").to_string(), &allowed);
        assert_eq!(
            paths.resolve("file:/old/t/data/a.parquet", "data file").unwrap(),
            root.join("data").join("a.parquet")
        );
        assert_eq!(paths.resolve("/old/t/data/a.parquet", "data file").unwrap(), root.join("data").join("a.parquet"));
        assert!(paths.resolve("/elsewhere/a.parquet", "data file").is_err(), "outside the root is refused");
        let relative = Paths::new(root.clone(), "data/persistent/t".into(), &allowed);
        assert_eq!(
            relative.resolve("data/persistent/t/metadata/m.avro", "manifest").unwrap(),
            root.join("metadata").join("m.avro")
        );
        assert!(relative.resolve("/other/m.avro", "manifest").is_err());
        // A file the writer kept beside the table, in its warehouse: found there, and read
        // only where the user allows.
        let warehouse = Location::from(std::path::Path::new("/moved/w/db/t"));
        let beside = Paths::new(warehouse.clone(), "w/db/t".into(), &AllowedLocations::Any);
        assert_eq!(
            beside.resolve("w/example/f.parquet", "data file").unwrap(),
            Location::from(std::path::Path::new("/moved/w/example/f.parquet"))
        );
        let refused = Paths::new(warehouse, "w/db/t".into(), &allowed);
        assert!(refused.resolve("w/example/f.parquet", "data file").is_err());
    }
}
