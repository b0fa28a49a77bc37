//! Reading a planned scan: the plan's surviving row groups, with their page selections,
//! become the stream's tasks over the footers planning read. Nothing is planned, bound or
//! opened twice — the plan is built once and passed along as data.
//!
//! ```no_run
//! use pqsift::planning::scan::{Scan, ScanOptions};
//! use pqsift::reading::planned_read::read_plan;
//! use pqsift::reading::reader::ReaderConfig;
//! let scan = Scan::new(vec![std::path::Path::new("events.parquet")], None, Some("id = 7"), ScanOptions::default()).unwrap();
//! let plan = scan.plan().unwrap();
//! let (schema, mut stream) = read_plan(&scan, &plan, ReaderConfig::default(), None).unwrap();
//! while let Some(batch) = stream.next_batch_checked() {
//!     assert_eq!(batch.unwrap().schema(), schema);
//! }
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};

use crate::error::Result;
use crate::format::opener::OpenedFile;
use crate::planning::access_plan::RowGroupAccess;
use crate::planning::scan::{Scan, ScanPlan};
use crate::reading::reader::{ReaderConfig, declared_output_schema, open_stream, output_schema};
use crate::reading::scan_stream::{ScanStream, ScanTask};
use crate::storage::Storage;

/// Starts reading `plan`, a plan of `scan`, with the read options of `config`; the columns,
/// filter, name matching, partition values and declared schema are the scan's (`config`'s
/// own are replaced). Object store requests are counted into `counted_in` when given (the
/// read's metrics apart from planning's), else into the scan's. Returns the output schema
/// with the stream: a scan whose every row group was pruned still has one (the declared
/// schema's, or the first file's).
pub fn read_plan(
    scan: &Scan,
    plan: &ScanPlan,
    mut config: ReaderConfig,
    counted_in: Option<&Storage>,
) -> Result<(SchemaRef, ScanStream)> {
    let mut planned = Vec::new();
    for (position, file) in plan.files.iter().enumerate() {
        for row_group in &file.row_groups {
            let selection = match &row_group.access {
                RowGroupAccess::Skip => continue,
                RowGroupAccess::Scan => None,
                RowGroupAccess::Selection(selection) => Some(selection.clone()),
            };
            planned.push((position, row_group.index, selection));
        }
    }
    // The files with a row group to read, and the first file: it gives the output schema
    // even when every row group is pruned.
    let first = (!scan.files().is_empty()).then_some(0);
    let positions: Vec<usize> =
        planned.iter().map(|(position, _, _)| *position).chain(first).collect::<BTreeSet<_>>().into_iter().collect();
    let files = positions
        .iter()
        .map(|&position| {
            let opened = scan.open(position)?;
            Ok(match counted_in {
                Some(storage) => OpenedFile { location: opened.location.counted_in(storage), ..(*opened).clone() },
                None => (*opened).clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let tasks = planned
        .into_iter()
        .map(|(position, row_group, selection)| {
            let file = positions.binary_search(&position).expect("every planned file is opened");
            ScanTask::new(file, row_group, selection)
        })
        .collect();
    config.columns = scan.columns().map(<[String]>::to_vec);
    config.filter = scan.filter().cloned();
    config.bind = scan.options().bind.clone();
    config.partitions = scan.table().partitions.as_ref().map(|p| p.select(&positions)).transpose()?;
    config.declared = scan.declared().cloned();
    let schema = match (declared_output_schema(&config), files.first()) {
        (Some(declared), _) => declared?,
        (None, Some(first)) => output_schema(first, &config)?,
        (None, None) => Arc::new(Schema::empty()),
    };
    Ok((schema, open_stream(&files, tasks, &config)?))
}
