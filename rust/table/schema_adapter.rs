//! A table whose schema is declared (a Delta table's `metaData.schemaString`) rather than
//! read from its files: how each file's physical columns map onto the table's logical ones
//! (DataFusion's `SchemaAdapter`).
//!
//! A file may differ from the declared schema in three ways, all of which the reader hides:
//!
//! * **column mapping** — the file's columns (and nested struct fields) carry *physical*
//!   names (`col-5f42…`), the schema's fields name them in their metadata
//!   (`delta.columnMapping.physicalName`);
//! * **schema evolution** — a column (or struct field) added after the file was written is
//!   absent from it: its values are null;
//! * **type widening** — the file holds a narrower type (`int` for `long`, `float` for
//!   `double`, a smaller decimal): values are cast up.
//!
//! For each file a [`FileView`] says, per top-level logical column, whether it is read from
//! the file (and under which name) or is a constant of the file (a partition value, or
//! null for a missing column). Constants go through the same machinery as Hive partition
//! values: [`specialise`] folds them into the file's filter and [`PartitionValues`]
//! repeats them in the output. What is left of the filter is renamed to physical names
//! and bound to the file's own schema; decoded columns are turned back into the logical
//! types by [`to_logical`].
//!
//! ```
//! use std::sync::Arc;
//! use arrow::datatypes::{DataType, Field, Schema};
//! use pqsift::filter::{BindOptions, parse_filter};
//! use pqsift::table::delta::schema::ColumnMappingMode;
//! use pqsift::table::schema_adapter::DeclaredSchema;
//!
//! let physical = |name: &str, p: &str| Field::new(name, DataType::Int64, true)
//!     .with_metadata(std::collections::HashMap::from([("delta.columnMapping.physicalName".to_string(), p.to_string())]));
//! let declared = DeclaredSchema::new(
//!     Arc::new(Schema::new(vec![physical("id", "col-1"), physical("added_later", "col-2")])),
//!     ColumnMappingMode::Name,
//! );
//! // A file written before `added_later` existed, with a narrower `id`.
//! let file = Schema::new(vec![Field::new("col-1", DataType::Int32, true)]);
//! let view = declared.view(&file, None, 0, &BindOptions::default()).unwrap();
//! assert_eq!(view.file_roots, [Some(0), None]);
//! let filter = parse_filter("id > 5 AND added_later IS NULL").unwrap();
//! let physical_filter = declared.file_filter(&filter, &view, &BindOptions::default()).unwrap().unwrap();
//! assert_eq!(physical_filter.to_string(), "`col-1` > 5");
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, ListArray, MapArray, StructArray, new_null_array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};

use super::column_matching::{ColumnMatcher, FieldIds, has_field_ids};
use super::delta::schema::{ColumnMappingMode, parse_schema, physical_name};
use super::file_pruning::{replace_columns, specialise};
use super::iceberg::schema::{INITIAL_DEFAULT_KEY, initial_default, is_uuid};
use super::partition_values::PartitionValues;
use crate::error::{PqsiftError, Result};
use crate::filter::functions::UUID_TEXT;
use crate::filter::uuid_text::uuid_text;
use crate::filter::{BindOptions, ColumnPath, Expr, columns, resolve_column};

/// A table's declared (logical) schema and how its files name their columns.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredSchema {
    /// The logical schema, partition columns included, in the table's order.
    pub schema: SchemaRef,
    /// How file columns are named.
    pub mode: ColumnMappingMode,
    /// Whether fields with a Parquet field id are matched by it (a caller's schema; a
    /// Delta table in `id` mode does so by its mode).
    pub field_ids: FieldIds,
    /// The Delta `schemaString` it was parsed from (empty when built otherwise): what
    /// travels to a reader in another process.
    pub schema_string: String,
    /// Per top-level field, whether the scan reads it (projected or filtered on); empty:
    /// every field. A field to be matched by id that a file without ids cannot give fails
    /// the read only when it is read, as Spark checks only its requested schema.
    pub requested: Vec<bool>,
    /// Per file of the table, values for columns a file does not hold, by column name (an
    /// Iceberg identity partition's value from the manifest, which writers may leave out
    /// of the data file); a file that holds the column is read. `None`: such columns are
    /// null (or their initial default).
    pub fills: Option<PartitionValues>,
    /// Per file of the table, the predicate its rows must meet besides the scan's filter
    /// (`None` for a file, or for every file: none) — the rows an Iceberg table's equality
    /// deletes leave. In the declared schema's names.
    pub deletes: Option<Vec<Option<Expr>>>,
}

/// How one file's columns map onto the declared schema.
#[derive(Debug, Clone)]
pub struct FileView {
    /// Per logical top-level column, its root index in the file (`None`: a constant).
    pub file_roots: Vec<Option<usize>>,
    /// Per logical top-level column, its index in [`FileView::constants`] (`None`: read
    /// from the file).
    pub from_constant: Vec<Option<usize>>,
    /// The file's constant columns, one row: its partition values, then a null for every
    /// column the file lacks.
    pub constants: PartitionValues,
    /// The file's top-level fields.
    pub file_fields: Fields,
    /// Whether the file holds any Parquet field id.
    pub file_has_ids: bool,
    /// The predicate the file's rows must meet besides the scan's filter (see
    /// [`DeclaredSchema::deletes`]).
    pub deleted: Option<Expr>,
}

impl DeclaredSchema {
    /// A declared schema whose files name columns as `mode` says.
    pub fn new(schema: SchemaRef, mode: ColumnMappingMode) -> Self {
        Self {
            schema,
            mode,
            field_ids: FieldIds::Off,
            schema_string: String::new(),
            requested: Vec::new(),
            fills: None,
            deletes: None,
        }
    }

    /// The schema with fields matched by Parquet field id as `field_ids` says.
    pub fn with_field_ids(self, field_ids: FieldIds) -> Self {
        Self { field_ids, ..self }
    }

    /// How this schema's fields find a file's columns, names compared as `case_sensitive`
    /// says.
    pub fn matcher(&self, case_sensitive: bool) -> ColumnMatcher {
        ColumnMatcher { mode: self.mode, field_ids: self.field_ids, case_sensitive }
    }

    /// The schema with only the top-level fields `roots` read by the scan (see
    /// [`DeclaredSchema::requested`]).
    pub fn requesting(self, roots: impl IntoIterator<Item = usize>) -> Self {
        let mut requested = vec![false; self.schema.fields().len()];
        for root in roots {
            requested[root] = true;
        }
        Self { requested, ..self }
    }

    /// The schema as a scan reads it: when fields are matched by id, with
    /// [`DeclaredSchema::requested`] the `projection_roots` (`None`: every field) and the
    /// fields `filter` reads; otherwise this schema itself, borrowed (a reader asks once
    /// per file).
    pub fn requested_by(
        &self,
        projection_roots: Option<&[usize]>,
        filter: Option<&Expr>,
        options: &BindOptions,
    ) -> Result<Cow<'_, Self>> {
        let (FieldIds::Match, Some(roots)) = (self.field_ids, projection_roots) else { return Ok(Cow::Borrowed(self)) };
        let filtered = filter
            .into_iter()
            .flat_map(columns)
            .map(|path| resolve_column(&self.schema, &path, options).map(|c| c.indices[0]));
        let roots = roots.iter().copied().map(Ok).chain(filtered).collect::<Result<Vec<_>>>()?;
        Ok(Cow::Owned(self.clone().requesting(roots)))
    }

    /// [`DeclaredSchema::matcher`] for the top-level field `root`: a field the scan does
    /// not read is null where a file has no field ids, rather than an error.
    pub fn matcher_for(&self, root: usize, case_sensitive: bool) -> ColumnMatcher {
        let mut matcher = self.matcher(case_sensitive);
        if matcher.field_ids == FieldIds::Match && self.requested.get(root) == Some(&false) {
            matcher.field_ids = FieldIds::MatchIgnoringMissing;
        }
        matcher
    }

    /// The schema of a Delta `schemaString` (of the table `table`, named in errors), every
    /// field nullable: a file written before a column or struct field was added holds
    /// nulls for it whatever the schema says now (Spark reads files as nullable too).
    pub fn from_delta(table: &str, schema_string: &str, mode: ColumnMappingMode) -> Result<Self> {
        let schema = parse_schema(table, schema_string)?;
        let fields: Vec<Field> = schema.fields().iter().map(|f| nullable_field(f)).collect();
        let schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
        Ok(Self {
            schema,
            mode,
            field_ids: FieldIds::Off,
            schema_string: schema_string.to_string(),
            requested: Vec::new(),
            fills: None,
            deletes: None,
        })
    }

    /// The schema as text for another process (see [`DeclaredSchema::from_text`]):
    /// `mode` on the first line, the `schemaString` after it; a schema not read from a
    /// Delta log (the scan schema of files whose schemas differ, a caller's schema) as
    /// `arrow` (followed by ` field_ids=<setting>` when fields are matched by id) and its
    /// Arrow IPC encoding in hexadecimal.
    ///
    /// ```
    /// use pqsift::table::delta::schema::ColumnMappingMode;
    /// use pqsift::table::schema_adapter::DeclaredSchema;
    /// let text = r#"{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}"#;
    /// let declared = DeclaredSchema::from_delta("t", text, ColumnMappingMode::None).unwrap();
    /// assert_eq!(DeclaredSchema::from_text("t", &declared.to_text()).unwrap(), declared);
    /// ```
    pub fn to_text(&self) -> String {
        if self.schema_string.is_empty() {
            let field_ids = match self.field_ids {
                FieldIds::Off => String::new(),
                setting => format!(" {FIELD_IDS_TEXT}{setting}"),
            };
            // An Iceberg table's schema: matched by id where files have ids, else by the
            // names its fields carry.
            let by_id = if self.mode == ColumnMappingMode::Id { format!(" {MODE_ID_TEXT}") } else { String::new() };
            return format!("{ARROW_TEXT}{field_ids}{by_id}\n{}", arrow_schema_hex(&self.schema));
        }
        let mode = match self.mode {
            ColumnMappingMode::None => "none",
            ColumnMappingMode::Name => "name",
            ColumnMappingMode::Id => "id",
        };
        format!("{mode}\n{}", self.schema_string)
    }

    /// The schema [`DeclaredSchema::to_text`] wrote, for the table `table`.
    pub fn from_text(table: &str, text: &str) -> Result<Self> {
        let (mode, schema_string) = text.split_once('\n').unwrap_or((text, ""));
        if let Some(settings) = mode.strip_prefix(ARROW_TEXT) {
            let by_id = settings.split_whitespace().any(|s| s == MODE_ID_TEXT);
            let others: Vec<&str> = settings.split_whitespace().filter(|s| *s != MODE_ID_TEXT).collect();
            let field_ids = match others.as_slice() {
                [] => Some(FieldIds::Off),
                [setting] => setting.strip_prefix(FIELD_IDS_TEXT).and_then(FieldIds::parse),
                _ => None,
            };
            let Some(field_ids) = field_ids else {
                return Err(PqsiftError::table(
                    table,
                    format!("invalid scan schema text: unknown setting {settings:?}"),
                ));
            };
            let schema = Arc::new(arrow_schema_from_hex(table, schema_string)?);
            let mode = if by_id { ColumnMappingMode::Id } else { ColumnMappingMode::None };
            return Ok(Self::new(schema, mode).with_field_ids(field_ids));
        }
        let configuration = [(super::delta::schema::COLUMN_MAPPING_MODE_KEY.to_string(), mode.to_string())].into();
        Self::from_delta(table, schema_string, ColumnMappingMode::from_configuration(table, &configuration)?)
    }

    /// The physical name of a logical field.
    pub fn physical_name<'a>(&self, field: &'a Field) -> &'a str {
        physical_name(field, self.mode)
    }

    /// The view of a file with schema `file`; `partitions` (the table's partition values,
    /// row `position` this file's) supply the partition columns.
    pub fn view(
        &self,
        file: &Schema,
        partitions: Option<&PartitionValues>,
        position: usize,
        options: &BindOptions,
    ) -> Result<FileView> {
        let mut file_roots = Vec::with_capacity(self.schema.fields().len());
        let mut from_constant = Vec::with_capacity(file_roots.capacity());
        let mut constant_fields: Vec<FieldRef> = Vec::new();
        let mut constant_columns: Vec<ArrayRef> = Vec::new();
        let file_has_ids = has_field_ids(file.fields());
        let partition_of = match partitions {
            Some(p) => self.from_partition(&p.schema, options.case_sensitive),
            None => vec![None; self.schema.fields().len()],
        };
        for (root, (field, partition)) in self.schema.fields().iter().zip(partition_of).enumerate() {
            if let (Some(k), Some(partitions)) = (partition, partitions) {
                file_roots.push(None);
                from_constant.push(Some(constant_fields.len()));
                constant_fields.push(Arc::new(partitions.schema.field(k).clone()));
                constant_columns.push(partitions.values.column(k).slice(position, 1));
                continue;
            }
            match self.matcher_for(root, options.case_sensitive).find(file.fields(), field, file_has_ids)? {
                Some(file_root) => {
                    file_roots.push(Some(file_root));
                    from_constant.push(None);
                }
                None => {
                    file_roots.push(None);
                    from_constant.push(Some(constant_fields.len()));
                    constant_fields.push(Arc::new(field.as_ref().clone().with_nullable(true)));
                    constant_columns.push(self.fill(field, position)?);
                }
            }
        }
        let constants = PartitionValues::with_rows(Arc::new(Schema::new(constant_fields)), constant_columns, 1)?;
        let deleted = self.deletes.as_ref().and_then(|d| d.get(position).cloned().flatten());
        Ok(FileView { file_roots, from_constant, constants, file_fields: file.fields().clone(), file_has_ids, deleted })
    }

    /// The value of `field` in file `position` of the table when the file does not hold
    /// it: its fill (see [`DeclaredSchema::fills`]) when it has one, else the field's
    /// initial default, else null. One row.
    fn fill(&self, field: &Field, position: usize) -> Result<ArrayRef> {
        if let Some(fills) = &self.fills
            && let Some(k) = fills.schema.fields().iter().position(|f| f.name() == field.name())
            && fills.values.column(k).is_valid(position)
        {
            return Ok(cast(&fills.values.column(k).slice(position, 1), field.data_type())?);
        }
        if let Some(text) = field.metadata().get(INITIAL_DEFAULT_KEY) {
            return initial_default(field, text).map_err(|e| {
                PqsiftError::schema_mismatch(
                    field.name(),
                    format!("the initial default {text:?} of column {}: {e}", field.name()),
                )
            });
        }
        Ok(new_null_array(field.data_type(), 1))
    }

    /// The schema for the table's files at `positions` only (its fills selected).
    pub fn select(&self, positions: &[usize]) -> Result<Self> {
        let fills = self.fills.as_ref().map(|f| f.select(positions)).transpose()?;
        let deletes = self.deletes.as_ref().map(|d| positions.iter().map(|&p| d[p].clone()).collect());
        Ok(Self { fills, deletes, ..self.clone() })
    }

    /// Per declared field, the partition column of `partitions` it is (by name).
    pub fn from_partition(&self, partitions: &Schema, case_sensitive: bool) -> Vec<Option<usize>> {
        self.schema
            .fields()
            .iter()
            .map(|field| partitions.fields().iter().position(|p| names_match(p.name(), field.name(), case_sensitive)))
            .collect()
    }

    /// The predicate a file's rows must meet — `filter` (the scan's, if any) and the rows
    /// its deletes leave — in the file's names, as [`DeclaredSchema::file_filter`] gives it.
    /// `None`: every row.
    pub fn row_filter(&self, filter: Option<&Expr>, view: &FileView, options: &BindOptions) -> Result<Option<Expr>> {
        match (filter, &view.deleted) {
            (None, None) => Ok(None),
            (Some(filter), None) => self.file_filter(filter, view, options),
            (None, Some(deleted)) => self.file_filter(deleted, view, options),
            (Some(filter), Some(deleted)) => {
                let both = Expr::And(Box::new(filter.clone()), Box::new(deleted.clone()));
                self.file_filter(&both, view, options)
            }
        }
    }

    /// Whether some file's rows must meet a predicate besides the scan's filter (see
    /// [`DeclaredSchema::deletes`]): then not every planned row is output.
    pub fn has_deletes(&self) -> bool {
        self.deletes.as_ref().is_some_and(|d| d.iter().any(Option::is_some))
    }

    /// The filter for a file's rows, in the file's names: constants folded (see
    /// [`specialise`]), the remaining column references renamed. `None`: every row
    /// matches; `Some(FALSE)`: none can.
    pub fn file_filter(&self, filter: &Expr, view: &FileView, options: &BindOptions) -> Result<Option<Expr>> {
        let Some(specialised) = specialise(filter, &self.schema, &view.from_constant, &view.constants, 0, options)?
        else {
            return Ok(None);
        };
        let renamed = replace_columns(&specialised, &mut |expr| {
            let Expr::Column(path) = expr else { return Ok(None) };
            let renamed = Expr::Column(ColumnPath::new(self.file_column_path(path, view, options)?));
            // An Iceberg uuid: the file's 16 bytes read as the text the filter compares.
            Ok(Some(match self.declared_field(path, options).is_some_and(is_uuid) {
                true => Expr::Function { name: UUID_TEXT.to_string(), args: vec![renamed] },
                false => renamed,
            }))
        })?;
        Ok(Some(renamed))
    }

    /// The declared field a column path names (struct fields below the root included).
    fn declared_field(&self, path: &ColumnPath, options: &BindOptions) -> Option<&Field> {
        let column = resolve_column(&self.schema, path, options).ok()?;
        let (first, rest) = column.indices.split_first()?;
        let mut field = self.schema.fields().get(*first)?.as_ref();
        for &index in rest {
            let DataType::Struct(children) = field.data_type() else { return None };
            field = children.get(index)?.as_ref();
        }
        Some(field)
    }

    /// The file's names along a scan column path (struct fields below the root included);
    /// a struct field the file lacks keeps its physical name (and binding it to the file
    /// fails).
    fn file_column_path(&self, path: &ColumnPath, view: &FileView, options: &BindOptions) -> Result<Vec<String>> {
        let column = resolve_column(&self.schema, path, options)?;
        let root = column.indices[0];
        let Some(file_root) = view.file_roots[root] else {
            return Err(PqsiftError::filter(format!("column {path}: not in the file")));
        };
        let mut field = self.schema.field(root);
        let mut logical = Vec::with_capacity(column.indices.len() - 1);
        for &index in &column.indices[1..] {
            let DataType::Struct(children) = field.data_type() else {
                return Err(PqsiftError::filter(format!("column {path}: not a struct path")));
            };
            field = children[index].as_ref();
            logical.push(field.name().clone());
        }
        let mut names = vec![view.file_fields[file_root].name().clone()];
        names.extend(self.file_field_path(root, file_root, &logical, view, options.case_sensitive)?);
        // Levels the file lacks keep their physical names.
        let mut field = self.schema.field(root);
        for (level, name) in logical.iter().enumerate() {
            let DataType::Struct(children) = field.data_type() else { break };
            let Some(child) = children.iter().find(|c| c.name() == name) else { break };
            field = child.as_ref();
            if level + 1 >= names.len() {
                names.push(self.physical_name(field).to_string());
            }
        }
        Ok(names)
    }

    /// The file's names of the struct fields along `logical` (names below the scan's
    /// column `root`, read from the file's field `file_root` of `view`), as far as the
    /// file has them.
    pub fn file_field_path(
        &self,
        root: usize,
        file_root: usize,
        logical: &[String],
        view: &FileView,
        case_sensitive: bool,
    ) -> Result<Vec<String>> {
        self.matcher(case_sensitive).file_path(
            self.schema.field(root),
            &view.file_fields[file_root],
            logical,
            view.file_has_ids,
        )
    }
}

/// The first line of [`DeclaredSchema::to_text`] for a schema given as Arrow's.
const ARROW_TEXT: &str = "arrow";

/// How [`DeclaredSchema::to_text`] says an Arrow schema's fields are matched as a Delta
/// table's in column mapping mode `id` (an Iceberg table's).
const MODE_ID_TEXT: &str = "mode=id";

/// How [`DeclaredSchema::to_text`] says fields are matched by id.
const FIELD_IDS_TEXT: &str = "field_ids=";

/// `schema` as an Arrow IPC stream of no batch, in hexadecimal.
fn arrow_schema_hex(schema: &Schema) -> String {
    let mut bytes = Vec::new();
    // Writing a schema to memory fails only on an unencodable type: then no text (and a
    // reader of it fails with a message).
    if let Ok(mut writer) = arrow::ipc::writer::StreamWriter::try_new(&mut bytes, schema) {
        let _ = writer.finish();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The schema [`arrow_schema_hex`] wrote (of the table `table`, named in errors).
fn arrow_schema_from_hex(table: &str, hex: &str) -> Result<Schema> {
    let invalid = |reason: String| PqsiftError::Table {
        table: table.to_string(),
        reason: format!("invalid scan schema text: {reason}"),
    };
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| invalid("not hexadecimal".into()))
        })
        .collect::<Result<Vec<u8>>>()?;
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .map_err(|e| invalid(e.to_string()))?;
    Ok(reader.schema().as_ref().clone())
}

/// `field` and every field below it nullable, but for a map's entries and keys (which
/// Arrow requires non-null).
fn nullable_field(field: &Field) -> Field {
    let data_type = match field.data_type() {
        DataType::Struct(children) => DataType::Struct(children.iter().map(|c| nullable_field(c)).collect()),
        DataType::List(element) => DataType::List(Arc::new(nullable_field(element))),
        DataType::Map(entries, sorted) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let key = kv[0].as_ref().clone();
                let value = nullable_field(&kv[1]);
                let key = key.clone().with_data_type(nullable_field(&key).data_type().clone());
                let entries = entries.as_ref().clone().with_data_type(DataType::Struct(Fields::from(vec![key, value])));
                DataType::Map(Arc::new(entries), *sorted)
            }
            _ => field.data_type().clone(),
        },
        other => other.clone(),
    };
    field.clone().with_data_type(data_type).with_nullable(true)
}

fn names_match(a: &str, b: &str, case_sensitive: bool) -> bool {
    if case_sensitive { a == b } else { a.eq_ignore_ascii_case(b) }
}

pub(crate) use super::column_matching::find_field;

/// `array` as `logical`, matching struct fields as `matcher` says, in a file holding field
/// ids or not (`file_has_ids`; see the module documentation).
pub fn to_logical(
    array: &ArrayRef,
    logical: &DataType,
    matcher: &ColumnMatcher,
    file_has_ids: bool,
) -> Result<ArrayRef> {
    if array.data_type() == logical {
        return Ok(Arc::clone(array));
    }
    match (array.data_type(), logical) {
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let source = array.as_any().downcast_ref::<StructArray>().expect("a struct array");
            let columns = fields
                .iter()
                .map(|field| match matcher.find(source.fields(), field, file_has_ids)? {
                    Some(i) => to_logical(source.column(i), field.data_type(), matcher, file_has_ids),
                    None => Ok(new_null_array(field.data_type(), source.len())),
                })
                .collect::<Result<Vec<_>>>()?;
            let fields = relax_nullability(fields, &columns);
            Ok(Arc::new(StructArray::try_new(fields, columns, source.nulls().cloned())?))
        }
        (DataType::List(_), DataType::List(element)) => {
            let source = array.as_any().downcast_ref::<ListArray>().expect("a list array");
            let values = to_logical(source.values(), element.data_type(), matcher, file_has_ids)?;
            let element =
                Arc::new(element.as_ref().clone().with_nullable(element.is_nullable() || values.null_count() > 0));
            Ok(Arc::new(ListArray::try_new(element, source.offsets().clone(), values, source.nulls().cloned())?))
        }
        (DataType::Map(_, _), DataType::Map(entries, sorted)) => {
            let source = array.as_any().downcast_ref::<MapArray>().expect("a map array");
            let DataType::Struct(entry_fields) = entries.data_type() else {
                return Err(PqsiftError::filter(format!("map entries of type {}", entries.data_type())));
            };
            // Map keys and values match by position: their names are not mapped.
            let source_entries = source.entries();
            let columns = entry_fields
                .iter()
                .zip(source_entries.columns())
                .map(|(field, column)| to_logical(column, field.data_type(), matcher, file_has_ids))
                .collect::<Result<Vec<_>>>()?;
            let fields = relax_nullability(entry_fields, &columns);
            let entries_array = StructArray::try_new(fields.clone(), columns, None)?;
            let entries_field = Arc::new(Field::new(entries.name(), DataType::Struct(fields), false));
            Ok(Arc::new(MapArray::try_new(
                entries_field,
                source.offsets().clone(),
                entries_array,
                source.nulls().cloned(),
                *sorted,
            )?))
        }
        // Only an Iceberg uuid is declared text and stored as 16 bytes.
        (DataType::FixedSizeBinary(16), DataType::Utf8) => Ok(uuid_text(array)),
        _ => Ok(cast(array, logical)?),
    }
}

/// `fields`, made nullable where their column holds nulls (a non-nullable field the file
/// lacks is null all the same: the writer of an older file never wrote it).
fn relax_nullability(fields: &Fields, columns: &[ArrayRef]) -> Fields {
    fields
        .iter()
        .zip(columns)
        .map(|(field, column)| match !field.is_nullable() && column.null_count() > 0 {
            true => Arc::new(field.as_ref().clone().with_nullable(true)),
            false => Arc::clone(field),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array};

    #[test]
    fn a_schema_given_as_arrow_travels_as_text() {
        let schema = Schema::new(vec![
            Field::new("id", DataType::UInt64, false),
            Field::new("s", DataType::Struct(Fields::from(vec![Field::new("a", DataType::LargeUtf8, true)])), true),
        ]);
        let declared = DeclaredSchema::new(Arc::new(schema), ColumnMappingMode::None);
        let text = declared.to_text();
        assert!(text.starts_with("arrow\n"));
        assert_eq!(DeclaredSchema::from_text("t", &text).unwrap(), declared);
        assert!(DeclaredSchema::from_text("t", "arrow\nzz").unwrap_err().to_string().contains("not hexadecimal"));
    }

    fn mapped(name: &str, physical: &str, data_type: DataType) -> Field {
        Field::new(name, data_type, true).with_metadata(std::collections::HashMap::from([(
            super::super::delta::schema::PHYSICAL_NAME_KEY.to_string(),
            physical.to_string(),
        )]))
    }

    #[test]
    fn structs_are_renamed_widened_and_filled() {
        let logical = DataType::Struct(Fields::from(vec![
            mapped("a", "col-a", DataType::Int64),
            mapped("b", "col-b", DataType::Utf8),
        ]));
        let source: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("col-a", DataType::Int32, true)),
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
        )]));
        let matcher = ColumnMatcher { mode: ColumnMappingMode::Name, ..Default::default() };
        let out = to_logical(&source, &logical, &matcher, false).unwrap();
        let out = out.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(out.column_names(), ["a", "b"]);
        assert_eq!(out.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values(), &[1, 2]);
        assert_eq!(out.column(1).null_count(), 2);
    }

    #[test]
    fn partition_columns_and_missing_columns_are_constants() {
        let declared = DeclaredSchema::new(
            Arc::new(Schema::new(vec![
                Field::new("x", DataType::Int64, true),
                Field::new("p", DataType::Utf8, true),
                Field::new("y", DataType::Utf8, true),
            ])),
            ColumnMappingMode::None,
        );
        let partitions = PartitionValues::new(
            Arc::new(Schema::new(vec![Field::new("p", DataType::Utf8, true)])),
            vec![Arc::new(arrow::array::StringArray::from(vec!["a", "b"]))],
        )
        .unwrap();
        let file = Schema::new(vec![Field::new("X", DataType::Int64, true)]);
        let options = BindOptions::default();
        let view = declared.view(&file, Some(&partitions), 1, &options).unwrap();
        assert_eq!(view.file_roots, [Some(0), None, None]);
        assert_eq!(view.from_constant, [None, Some(0), Some(1)]);
        let filter = crate::filter::parse_filter("p = 'a' OR y IS NULL").unwrap();
        assert_eq!(declared.file_filter(&filter, &view, &options).unwrap(), None);
        let filter = crate::filter::parse_filter("p = 'a' AND x > 1").unwrap();
        assert_eq!(declared.file_filter(&filter, &view, &options).unwrap().unwrap().to_string(), "false");
    }
}
