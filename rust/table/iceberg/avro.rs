//! Avro object container files (manifest lists and manifests) decoded straight into the
//! structs that name the fields a reader needs, and the serde helpers those structs are
//! made of. Fields are found by name, as the Iceberg spec fixes the names of manifest
//! fields; writers differ in the rest (record names, `int` or `long`, a union with null
//! or not), and the helpers take either.
//!
//! ```
//! use apache_avro::{Schema, Writer, types::Record};
//! use pqsift::table::iceberg::avro::{AnyRecord, Long, Nullable, SchemaCache, read_container_as};
//! #[derive(serde::Deserialize)]
//! struct Entry { status: Long, #[serde(default)] note: Nullable<String> }
//! let schema = Schema::parse_str(r#"{"type": "record", "name": "r1", "fields": [
//!     {"name": "status", "type": "int"}, {"name": "skipped", "type": "double"}]}"#).unwrap();
//! let mut writer = Writer::new(&schema, Vec::new()).unwrap();
//! let mut record = Record::new(&schema).unwrap();
//! record.put("status", 2);
//! record.put("skipped", 0.5);
//! writer.append_value(record).unwrap();
//! let bytes = writer.into_inner().unwrap();
//! let here = std::path::Path::new("m.avro").into();
//! let (entries, _) = read_container_as::<AnyRecord<Entry>>(&here, &here, &bytes, &SchemaCache::default()).unwrap();
//! assert_eq!((entries[0].0.status.0, entries[0].0.note.0.is_none()), (2, true));
//! ```

use apache_avro::types::Value;

use crate::error::{PqsiftError, Result};
use crate::storage::Location;

/// An Avro file's key-value metadata.
pub type FileMetadata = Vec<(String, Vec<u8>)>;

/// The value a union holds, or the value itself.
pub fn unwrapped(value: &Value) -> &Value {
    match value {
        Value::Union(_, inner) => unwrapped(inner),
        other => other,
    }
}

/// Parsed writer schemas by their text, shared by the readers of one table's manifests
/// (a writer gives all its manifests the same schema: it is parsed once, not per file).
#[derive(Default)]
pub struct SchemaCache {
    parsed: std::sync::Mutex<Vec<(String, std::sync::Arc<apache_avro::Schema>)>>,
}

impl SchemaCache {
    fn get(&self, text: &str) -> std::result::Result<std::sync::Arc<apache_avro::Schema>, apache_avro::Error> {
        let mut parsed = self.parsed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, schema)) = parsed.iter().find(|(t, _)| t == text) {
            return Ok(std::sync::Arc::clone(schema));
        }
        let schema = std::sync::Arc::new(apache_avro::Schema::parse_str(text)?);
        parsed.push((text.to_string(), std::sync::Arc::clone(&schema)));
        Ok(schema)
    }
}

/// The most a block may inflate to (the `apache-avro` crate's own allocation limit).
const MAX_BLOCK_BYTES: u64 = 512 << 20;

/// The records of an Avro object container file decoded straight into `T` through serde
/// (no generic values built; fields `T` does not name are skipped), with the file's
/// key-value metadata. The container's framing — header, blocks, sync markers — is read
/// here so that the writer schema is parsed once per distinct text (`schemas`) and
/// deflate blocks inflate with the zlib-rs backend the parquet crate links; records
/// decode with the crate's schema-aware deserializer.
pub fn read_container_as<T: serde::de::DeserializeOwned>(
    table: &Location,
    file: &Location,
    bytes: &[u8],
    schemas: &SchemaCache,
) -> Result<(Vec<T>, FileMetadata)> {
    let corrupt = |reason: String| PqsiftError::table(table, format!("{file}: not a readable Avro file: {reason}"));
    let truncated = || corrupt("truncated".into());
    let mut rest = bytes;
    if take(&mut rest, 4) != Some(b"Obj\x01") {
        return Err(corrupt("no Avro magic".into()));
    }
    let mut metadata = FileMetadata::new();
    loop {
        let mut count = read_long(&mut rest).ok_or_else(truncated)?;
        if count == 0 {
            break;
        }
        if count < 0 {
            count = count.checked_neg().ok_or_else(truncated)?;
            read_long(&mut rest).ok_or_else(truncated)?; // the block's size in bytes
        }
        for _ in 0..count {
            let key = read_bytes(&mut rest).ok_or_else(truncated)?;
            let value = read_bytes(&mut rest).ok_or_else(truncated)?;
            metadata.push((String::from_utf8_lossy(key).into_owned(), value.to_vec()));
        }
    }
    let sync = take(&mut rest, 16).ok_or_else(truncated)?;
    let meta = |key: &str| metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice());
    let schema_text = meta("avro.schema").ok_or_else(|| corrupt("no schema in its header".into()))?;
    let schema_text = std::str::from_utf8(schema_text).map_err(|e| corrupt(format!("its schema: {e}")))?;
    let schema = schemas.get(schema_text).map_err(|e| corrupt(format!("its schema: {e}")))?;
    let codec = std::str::from_utf8(meta("avro.codec").unwrap_or(b"null")).unwrap_or("?").to_string();
    let reader = apache_avro::reader::datum::GenericDatumReader::builder(&schema)
        .build()
        .map_err(|e| corrupt(format!("its schema: {e}")))?;
    let mut records = Vec::new();
    while !rest.is_empty() {
        crate::interrupt::check()?;
        let count = read_long(&mut rest).ok_or_else(truncated)?;
        let size = read_long(&mut rest).and_then(|s| usize::try_from(s).ok()).ok_or_else(truncated)?;
        let block = take(&mut rest, size).ok_or_else(truncated)?;
        if take(&mut rest, 16) != Some(sync) {
            return Err(corrupt("a block not followed by the file's sync marker".into()));
        }
        let block = inflate(&codec, block).map_err(corrupt)?;
        let mut data: &[u8] = &block;
        for _ in 0..count {
            records.push(reader.read_deser::<T>(&mut data).map_err(|e| corrupt(e.to_string()))?);
        }
    }
    Ok((records, metadata))
}

/// A block's bytes, decompressed by the file's codec.
fn inflate<'a>(codec: &str, block: &'a [u8]) -> std::result::Result<std::borrow::Cow<'a, [u8]>, String> {
    match codec {
        "null" => Ok(std::borrow::Cow::Borrowed(block)),
        "deflate" => inflate_raw(block).map(std::borrow::Cow::Owned),
        other => {
            let codec: apache_avro::Codec = other.parse().map_err(|_| format!("the codec {other:?}"))?;
            let mut out = block.to_vec();
            codec.decompress(&mut out).map_err(|e| format!("a {other} block: {e}"))?;
            Ok(std::borrow::Cow::Owned(out))
        }
    }
}

thread_local! {
    /// One inflater per thread, reset for each block: setting one up (its window and
    /// tables) costs more than inflating a small manifest.
    static INFLATER: std::cell::RefCell<flate2::Decompress> = std::cell::RefCell::new(flate2::Decompress::new(false));
}

/// A raw deflate stream inflated, to at most [`MAX_BLOCK_BYTES`].
fn inflate_raw(block: &[u8]) -> std::result::Result<Vec<u8>, String> {
    INFLATER.with_borrow_mut(|inflater| {
        inflater.reset(false);
        let mut out = Vec::with_capacity(block.len().saturating_mul(4).max(64));
        loop {
            let read = usize::try_from(inflater.total_in()).unwrap_or(usize::MAX).min(block.len());
            let (in_before, out_before) = (inflater.total_in(), out.len());
            let status = inflater
                .decompress_vec(&block[read..], &mut out, flate2::FlushDecompress::Finish)
                .map_err(|e| format!("a deflate block: {e}"))?;
            if status == flate2::Status::StreamEnd {
                return Ok(out);
            }
            if out.len() == out.capacity() {
                if out.len() as u64 >= MAX_BLOCK_BYTES {
                    return Err(format!("a block inflating past {MAX_BLOCK_BYTES} bytes"));
                }
                out.reserve(out.len());
            } else if inflater.total_in() == in_before && out.len() == out_before {
                return Err("a deflate block cut short".into());
            }
        }
    })
}

/// The next `n` bytes.
fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (head, tail) = bytes.split_at_checked(n)?;
    *bytes = tail;
    Some(head)
}

/// A zig-zag varint `long`.
fn read_long(bytes: &mut &[u8]) -> Option<i64> {
    let mut value: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&byte, tail) = bytes.split_first()?;
        *bytes = tail;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some((value >> 1) as i64 ^ -((value & 1) as i64));
        }
    }
    None
}

/// A length-prefixed `bytes` or `string`.
fn read_bytes<'a>(bytes: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(read_long(bytes)?).ok()?;
    take(bytes, len)
}

/// A record of any name decoded into the struct `T`: the crate's deserializer checks that
/// a struct's name is the record's, and Iceberg writers name their records as they like
/// (`r2`, `k117_v118`), so records are read as maps of their fields. Fields `T` does not
/// name are skipped whatever they hold — a record included, which the crate's own
/// deserializer cannot skip (see [`SkippingUnknown`]).
#[derive(Debug)]
pub struct AnyRecord<T>(pub T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for AnyRecord<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        T::deserialize(AsAny(deserializer)).map(AnyRecord)
    }
}

/// A deserializer asked for anything — a struct included — as its data says, whose
/// record fields are read through [`SkippingUnknown`].
struct AsAny<D>(D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for AsAny<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> std::result::Result<V::Value, D::Error> {
        self.0.deserialize_any(RecordVisitor(visitor))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// A record's visitor handed a record whose field values are read through
/// [`SkippingUnknown`] (a record arrives as a map; null as unit or none).
struct RecordVisitor<V>(V);

impl<'de, V: serde::de::Visitor<'de>> serde::de::Visitor<'de> for RecordVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.expecting(f)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<V::Value, A::Error> {
        self.0.visit_map(FieldValues(map))
    }
    fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_none<E: serde::de::Error>(self) -> std::result::Result<V::Value, E> {
        self.0.visit_none()
    }
}

/// A record's fields, each value read through [`SkippingUnknown`].
struct FieldValues<A>(A);

impl<'de, A: serde::de::MapAccess<'de>> serde::de::MapAccess<'de> for FieldValues<A> {
    type Error = A::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> std::result::Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(seed)
    }
    fn next_value_seed<S: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> std::result::Result<S::Value, A::Error> {
        self.0.next_value_seed(FieldValue(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// A field value's seed, given the value's deserializer wrapped in [`SkippingUnknown`].
struct FieldValue<S>(S);

impl<'de, S: serde::de::DeserializeSeed<'de>> serde::de::DeserializeSeed<'de> for FieldValue<S> {
    type Value = S::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> std::result::Result<S::Value, D::Error> {
        self.0.deserialize(SkippingUnknown(deserializer))
    }
}

/// A field value's deserializer that skips a value nobody reads (serde asks for
/// `ignored_any` for a field a struct does not name) with [`Skipped`], which reads any
/// Avro value: the crate's own deserializer fails on a record there, as it cannot read
/// the record's field names as ignored values. Everything else goes to the crate's.
struct SkippingUnknown<D>(D);

macro_rules! forward_to_inner {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: serde::de::Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> std::result::Result<V::Value, D::Error> {
            self.0.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for SkippingUnknown<D> {
    type Error = D::Error;

    fn deserialize_ignored_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> std::result::Result<V::Value, D::Error> {
        <Skipped as serde::Deserialize>::deserialize(self.0)?;
        visitor.visit_unit()
    }

    forward_to_inner! {
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32();
        deserialize_i64(); deserialize_i128(); deserialize_u8(); deserialize_u16(); deserialize_u32();
        deserialize_u64(); deserialize_u128(); deserialize_f32(); deserialize_f64(); deserialize_char();
        deserialize_str(); deserialize_string(); deserialize_bytes(); deserialize_byte_buf();
        deserialize_option(); deserialize_unit(); deserialize_seq(); deserialize_map();
        deserialize_identifier();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A value that may be null whether or not its schema is a union with null (writers
/// differ: a field optional in the spec may be written as a plain `long`).
#[derive(Debug)]
pub struct Nullable<T>(pub Option<T>);

impl<T> Default for Nullable<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Nullable<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::IntoDeserializer;
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Either<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Either<T> {
            type Value = Nullable<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value or null")
            }
            fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<Self::Value, E> {
                Ok(Nullable(None))
            }
            fn visit_none<E: serde::de::Error>(self) -> std::result::Result<Self::Value, E> {
                Ok(Nullable(None))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> std::result::Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|v| Nullable(Some(v)))
            }
            fn visit_i32<E: serde::de::Error>(self, v: i32) -> std::result::Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|v| Nullable(Some(v)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|v| Nullable(Some(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                T::deserialize(v.to_string().into_deserializer()).map(|v| Nullable(Some(v)))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> std::result::Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|v| Nullable(Some(v)))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> std::result::Result<Self::Value, E> {
                T::deserialize(serde::de::value::BytesDeserializer::new(v)).map(|v| Nullable(Some(v)))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> std::result::Result<Self::Value, E> {
                self.visit_bytes(&v)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> std::result::Result<Self::Value, A::Error> {
                T::deserialize(SeqAccessDeserializer::new(seq)).map(|v| Nullable(Some(v)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|v| Nullable(Some(v)))
            }
        }
        deserializer.deserialize_any(Either(std::marker::PhantomData))
    }
}

/// A value read and dropped, records within it included (serde's own `IgnoredAny` asks
/// for a record's field names in a way the crate's deserializer refuses).
#[derive(Default)]
pub struct Skipped;

impl<'de> serde::Deserialize<'de> for Skipped {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Skip;
        impl<'de> serde::de::Visitor<'de> for Skip {
            type Value = Skipped;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Skipped, E> {
                Ok(Skipped)
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Skipped, E> {
                Ok(Skipped)
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Skipped, E> {
                Ok(Skipped)
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Skipped, E> {
                Ok(Skipped)
            }
            fn visit_str<E>(self, _: &str) -> std::result::Result<Skipped, E> {
                Ok(Skipped)
            }
            fn visit_bytes<E>(self, _: &[u8]) -> std::result::Result<Skipped, E> {
                Ok(Skipped)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Skipped, A::Error> {
                while seq.next_element::<Skipped>()?.is_some() {}
                Ok(Skipped)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Skipped, A::Error> {
                while map.next_key::<FieldName>()?.is_some() {
                    map.next_value::<Skipped>()?;
                }
                Ok(Skipped)
            }
            fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> std::result::Result<Skipped, A::Error> {
                use serde::de::VariantAccess;
                data.variant::<FieldName>()?.1.unit_variant()?;
                Ok(Skipped)
            }
        }
        deserializer.deserialize_any(Skip)
    }
}

/// A record field's name, skipped (the deserializer names fields only as identifiers).
pub struct FieldName;

impl<'de> serde::Deserialize<'de> for FieldName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_identifier(serde::de::IgnoredAny).map(|_| FieldName)
    }
}

/// An `int` or a `long` (writers differ), as a long.
#[derive(Default)]
pub struct Long(pub i64);

impl<'de> serde::Deserialize<'de> for Long {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Integer;
        impl serde::de::Visitor<'_> for Integer {
            type Value = Long;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an int or a long")
            }
            fn visit_i32<E>(self, v: i32) -> std::result::Result<Long, E> {
                Ok(Long(i64::from(v)))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Long, E> {
                Ok(Long(v))
            }
        }
        deserializer.deserialize_any(Integer)
    }
}

/// Avro `bytes` (or `fixed`).
pub struct AvroBytes(pub Vec<u8>);

impl<'de> serde::Deserialize<'de> for AvroBytes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        apache_avro::serde::bytes::deserialize(deserializer).map(AvroBytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_zig_zag() {
        let mut bytes: &[u8] = &[0x00, 0x01, 0x02, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let longs: Vec<i64> = std::iter::from_fn(|| read_long(&mut bytes)).collect();
        assert_eq!(longs, vec![0, -1, 1, -64, 64, i64::from(i32::MIN)]);
        assert_eq!(read_long(&mut &[0x80u8][..]), None, "cut short");
        assert_eq!(read_long(&mut &[0xffu8; 11][..]), None, "longer than a long");
    }

    #[test]
    fn fields_not_named_are_skipped_whatever_they_hold() {
        use apache_avro::types::{Record, Value};
        #[derive(serde::Deserialize)]
        struct Named {
            first: Long,
            inner: AnyRecord<Inner>,
            last: String,
        }
        #[derive(serde::Deserialize)]
        struct Inner {
            kept: Long,
        }
        let schema = apache_avro::Schema::parse_str(
            r#"{"type": "record", "name": "outer", "fields": [
                {"name": "first", "type": "int"},
                {"name": "a_record", "type": {"type": "record", "name": "stats", "fields": [
                    {"name": "n", "type": "long"}, {"name": "deeper", "type": {"type": "record", "name": "d", "fields": [
                        {"name": "s", "type": "string"}]}}]}},
                {"name": "records", "type": {"type": "array", "items": "stats"}},
                {"name": "by_name", "type": {"type": "map", "values": ["null", "stats"]}},
                {"name": "kind", "type": {"type": "enum", "name": "k", "symbols": ["A", "B"]}},
                {"name": "inner", "type": {"type": "record", "name": "i", "fields": [
                    {"name": "extra", "type": ["null", "stats"]}, {"name": "kept", "type": "long"}]}},
                {"name": "last", "type": "string"}]}"#,
        )
        .unwrap();
        let stats = |n: i64| {
            Value::Record(vec![
                ("n".into(), Value::Long(n)),
                ("deeper".into(), Value::Record(vec![("s".into(), Value::String("x".into()))])),
            ])
        };
        let mut record = Record::new(&schema).unwrap();
        record.put("first", 7);
        record.put("a_record", stats(1));
        record.put("records", Value::Array(vec![stats(2), stats(3)]));
        record.put("by_name", Value::Map([("a".to_string(), Value::Union(1, Box::new(stats(4))))].into()));
        record.put("kind", Value::Enum(1, "B".into()));
        record.put(
            "inner",
            Value::Record(vec![("extra".into(), Value::Union(1, Box::new(stats(5)))), ("kept".into(), Value::Long(9))]),
        );
        record.put("last", "end");
        let mut writer = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
        writer.append_value(record).unwrap();
        let bytes = writer.into_inner().unwrap();
        let here = std::path::Path::new("m.avro").into();
        let (read, _) = read_container_as::<AnyRecord<Named>>(&here, &here, &bytes, &SchemaCache::default()).unwrap();
        let AnyRecord(named) = &read[0];
        assert_eq!((named.first.0, named.inner.0.kept.0, named.last.as_str()), (7, 9, "end"));
    }

    #[test]
    fn deflate_blocks_inflate_with_a_reused_inflater() {
        use std::io::Write;
        let deflated = |data: &[u8]| {
            let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(data).unwrap();
            encoder.finish().unwrap()
        };
        let big: Vec<u8> = (0..200_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        for data in [&b"manifest"[..], &big, b""] {
            assert_eq!(inflate("deflate", &deflated(data)).unwrap().as_ref(), data);
        }
        let block = deflated(&big);
        assert!(inflate("deflate", &block[..block.len() / 2]).is_err(), "cut short");
        assert!(inflate("deflate", b"\xff\xff\xff").is_err(), "not deflate");
        assert!(inflate("lzma", b"").is_err(), "an unknown codec");
    }
}
