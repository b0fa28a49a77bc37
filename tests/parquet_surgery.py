"""Editing Parquet files below the level any writer allows: a Thrift compact-protocol
codec for the footer, page headers and bloom filter headers, and helpers that rewrite one
of them in place (shifting every offset behind it). Used by the hostile-file tests and
the fuzzer to make files whose sizes, counts and offsets lie.

>>> meta = decode(encode(Struct([Field(1, I32, 7)])))[0]
>>> meta.get(1)
7
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT, UUID = range(14)
INTS = (BYTE, I16, I32, I64)

# FileMetaData / RowGroup / ColumnChunk / ColumnMetaData field ids (parquet.thrift).
FILE_ROW_GROUPS, FILE_NUM_ROWS = 4, 3
RG_COLUMNS, RG_NUM_ROWS = 1, 3
CC_FILE_OFFSET, CC_META, CC_OI_OFFSET, CC_OI_LENGTH, CC_CI_OFFSET, CC_CI_LENGTH = 2, 3, 4, 5, 6, 7
CM_CODEC, CM_NUM_VALUES, CM_UNCOMPRESSED, CM_COMPRESSED, CM_DATA_PAGE, CM_INDEX_PAGE, CM_DICT_PAGE = 4, 5, 6, 7, 9, 10, 11
CM_BLOOM_OFFSET, CM_BLOOM_LENGTH = 14, 15
# DataPageHeaderV2: the levels' byte lengths (stored before the values, uncompressed) and
# whether the values are compressed.
V2_DEFINITION_BYTES, V2_REPETITION_BYTES, V2_IS_COMPRESSED = 5, 6, 7
# OffsetIndex's page locations; PageLocation's offset, size (header included), first row.
OI_LOCATIONS, PL_OFFSET, PL_SIZE, PL_FIRST_ROW = 1, 1, 2, 3
# PageHeader: type, uncompressed size, compressed size, CRC; data page (v1 / v2) headers.
PH_UNCOMPRESSED, PH_COMPRESSED, PH_CRC, PH_DATA, PH_DICT, PH_DATA_V2 = 2, 3, 4, 5, 7, 8


@dataclass
class Field:
    id: int
    type: int
    value: Any


@dataclass
class Struct:
    fields: list[Field] = field(default_factory=list)

    def get(self, id: int, default: Any = None) -> Any:  # noqa: A002 - the Thrift field's name
        for f in self.fields:
            if f.id == id:
                return f.value
        return default

    def set(self, id: int, type: int, value: Any) -> None:  # noqa: A002 - the Thrift field's name
        for f in self.fields:
            if f.id == id:
                f.value = value
                return
        self.fields.append(Field(id, type, value))
        self.fields.sort(key=lambda f: f.id)

    def remove(self, id: int) -> None:  # noqa: A002 - the Thrift field's name
        self.fields = [f for f in self.fields if f.id != id]


@dataclass
class List:
    element_type: int
    items: list[Any]


@dataclass
class Map:
    key_type: int
    value_type: int
    items: list[tuple[Any, Any]]


class _Reader:
    def __init__(self, data: bytes, position: int = 0) -> None:
        self.data, self.position = data, position

    def byte(self) -> int:
        if self.position >= len(self.data):
            raise ValueError("thrift: out of bytes")
        b = self.data[self.position]
        self.position += 1
        return b

    def take(self, n: int) -> bytes:
        if n < 0 or self.position + n > len(self.data):
            raise ValueError("thrift: out of bytes")
        out = self.data[self.position : self.position + n]
        self.position += n
        return out

    def varint(self) -> int:
        value, shift = 0, 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 70:
                raise ValueError("thrift: varint too long")

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def value(self, type: int, depth: int = 0) -> Any:  # noqa: A002 - the Thrift field's name
        if depth > 64:
            raise ValueError("thrift: too deep")
        if type in (TRUE, FALSE):
            return type == TRUE
        if type == BYTE:
            return struct.unpack("b", self.take(1))[0]
        if type in (I16, I32, I64):
            return self.zigzag()
        if type == DOUBLE:
            return self.take(8)
        if type == BINARY:
            return self.take(self.varint())
        if type in (LIST, SET):
            header = self.byte()
            size = header >> 4
            if size == 15:
                size = self.varint()
            element = header & 0x0F
            if size > len(self.data):
                raise ValueError("thrift: list too long")
            items = [self.byte() == TRUE if element in (TRUE, FALSE) else self.value(element, depth + 1) for _ in range(size)]
            return List(element, items)
        if type == MAP:
            size = self.varint()
            if size == 0:
                return Map(0, 0, [])
            types = self.byte()
            kt, vt = types >> 4, types & 0x0F
            if size > len(self.data):
                raise ValueError("thrift: map too long")
            return Map(kt, vt, [(self.value(kt, depth + 1), self.value(vt, depth + 1)) for _ in range(size)])
        if type == STRUCT:
            out = Struct()
            last = 0
            while True:
                header = self.byte()
                t = header & 0x0F
                if t == STOP:
                    return out
                delta = header >> 4
                fid = last + delta if delta else self.zigzag()
                if t in (TRUE, FALSE):
                    out.fields.append(Field(fid, TRUE, t == TRUE))
                else:
                    out.fields.append(Field(fid, t, self.value(t, depth + 1)))
                last = fid
        if type == UUID:
            return self.take(16)
        raise ValueError(f"thrift: unknown type {type}")


def _varint(v: int) -> bytes:
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(v: int) -> bytes:
    return _varint((v << 1) ^ (v >> 63))


def _encode_value(type: int, value: Any, out: bytearray) -> None:  # noqa: A002 - the Thrift field's name
    if type == BYTE:
        out += struct.pack("b", value)
    elif type in (I16, I32, I64):
        out += _zigzag(value)
    elif type in (DOUBLE, UUID):
        out += value
    elif type == BINARY:
        out += _varint(len(value)) + value
    elif type in (LIST, SET):
        n = len(value.items)
        out.append((n << 4 | value.element_type) if n < 15 else (0xF0 | value.element_type))
        if n >= 15:
            out += _varint(n)
        for item in value.items:
            if value.element_type in (TRUE, FALSE):
                out.append(TRUE if item else FALSE)
            else:
                _encode_value(value.element_type, item, out)
    elif type == MAP:
        out += _varint(len(value.items))
        if value.items:
            out.append(value.key_type << 4 | value.value_type)
            for k, v in value.items:
                _encode_value(value.key_type, k, out)
                _encode_value(value.value_type, v, out)
    elif type == STRUCT:
        last = 0
        for f in value.fields:
            t = (TRUE if f.value else FALSE) if f.type in (TRUE, FALSE) else f.type
            delta = f.id - last
            if 0 < delta <= 15:
                out.append(delta << 4 | t)
            else:
                out.append(t)
                out += _zigzag(f.id)
            if t not in (TRUE, FALSE):
                _encode_value(f.type, f.value, out)
            last = f.id
        out.append(STOP)
    else:
        raise ValueError(f"thrift: cannot encode type {type}")


def decode(data: bytes, position: int = 0) -> tuple[Struct, int]:
    """The struct at ``position`` and the position after it."""
    reader = _Reader(data, position)
    return reader.value(STRUCT), reader.position


def encode(value: Struct) -> bytes:
    out = bytearray()
    _encode_value(STRUCT, value, out)
    return bytes(out)


# ----- files ------------------------------------------------------------------------


def split(data: bytes) -> tuple[bytes, Struct]:
    """A Parquet file as (everything before the footer, the decoded FileMetaData)."""
    length = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - length
    footer, _ = decode(data[start:-8])
    return data[:start], footer


def join(body: bytes, footer: Struct) -> bytes:
    meta = encode(footer)
    return body + meta + struct.pack("<I", len(meta)) + b"PAR1"


def chunks(footer: Struct) -> list[tuple[Struct, Struct]]:
    """Every (ColumnChunk, ColumnMetaData) of the file, row group by row group."""
    out = []
    for rg in footer.get(FILE_ROW_GROUPS, List(STRUCT, [])).items:
        for cc in rg.get(RG_COLUMNS, List(STRUCT, [])).items:
            meta = cc.get(CC_META)
            if meta is not None:
                out.append((cc, meta))
    return out


def shift_offsets(footer: Struct, after: int, delta: int) -> None:
    """Moves every offset the footer holds that lies after byte ``after`` by ``delta``."""
    for cc, meta in chunks(footer):
        for holder, fid in ((cc, CC_FILE_OFFSET), (cc, CC_OI_OFFSET), (cc, CC_CI_OFFSET)):
            v = holder.get(fid)
            if v is not None and v > after:
                holder.set(fid, I64, v + delta)
        for fid in (CM_DATA_PAGE, CM_INDEX_PAGE, CM_DICT_PAGE, CM_BLOOM_OFFSET):
            v = meta.get(fid)
            if v is not None and v > after:
                meta.set(fid, I64, v + delta)


def rewrite_struct_at(data: bytes, offset: int, edit: Callable[[Struct], None]) -> bytes:
    """Decodes the Thrift struct at ``offset`` (a page or bloom filter header), applies
    ``edit``, and writes it back in its place (see :func:`splice`: what lies behind it
    moves, the footer, the chunk holding it and the offset indexes follow)."""
    header, end = decode(data, offset)
    edit(header)
    return splice(data, offset, end, encode(header))


def edit_footer(data: bytes, edit: Callable[[Struct], None]) -> bytes:
    body, footer = split(data)
    edit(footer)
    return join(body, footer)


def first_page_offset(meta: Struct) -> int:
    dictionary = meta.get(CM_DICT_PAGE)
    return dictionary if dictionary is not None and dictionary >= 4 else meta.get(CM_DATA_PAGE)


def pages(data: bytes, meta: Struct) -> list[tuple[int, Struct, int, int]]:
    """Every page of the column chunk ``meta`` describes, walked header by header: (header
    offset, header, first byte of the page's data, end of the page)."""
    position = first_page_offset(meta)
    end = position + meta.get(CM_COMPRESSED, 0)
    out = []
    while position < end:
        header, data_start = decode(data, position)
        page_end = data_start + header.get(PH_COMPRESSED, 0)
        out.append((position, header, data_start, page_end))
        position = page_end
    return out


def splice(data: bytes, start: int, end: int, new: bytes, uncompressed_delta: int = 0) -> bytes:
    """Replaces ``data[start:end]``, a part of one column chunk's pages, with ``new`` and
    moves what lies behind it: the footer's offsets, the chunk's sizes, and the page
    locations of every offset index (written anew after the pages; the old ones stay,
    unreferenced), so that the file stays whole but for the bytes replaced."""
    body, footer = split(data)
    delta = len(new) - (end - start)
    for _, meta in chunks(footer):
        first = first_page_offset(meta)
        if first <= start < first + meta.get(CM_COMPRESSED, 0):
            meta.set(CM_COMPRESSED, I64, meta.get(CM_COMPRESSED, 0) + delta)
            meta.set(CM_UNCOMPRESSED, I64, meta.get(CM_UNCOMPRESSED, 0) + uncompressed_delta)
    offset_indexes = []
    for cc, _ in chunks(footer):
        if cc.get(CC_OI_OFFSET) is None:
            continue
        index, _ = decode(body, cc.get(CC_OI_OFFSET))
        for location in index.get(OI_LOCATIONS, List(STRUCT, [])).items:
            offset, size = location.get(PL_OFFSET, 0), location.get(PL_SIZE, 0)
            if offset <= start < offset + size:
                location.set(PL_SIZE, I32, size + delta)
            elif offset > start:
                location.set(PL_OFFSET, I64, offset + delta)
        offset_indexes.append((cc, index))
    shift_offsets(footer, start, delta)
    body = body[:start] + new + body[end:]
    for cc, index in offset_indexes:
        encoded = encode(index)
        cc.set(CC_OI_OFFSET, I64, len(body))
        cc.set(CC_OI_LENGTH, I32, len(encoded))
        body += encoded
    return join(body, footer)


# Parquet's codecs as pyarrow names them (LZO and Hadoop's LZ4 framing: none).
CODECS = {0: None, 1: "snappy", 2: "gzip", 4: "brotli", 6: "zstd", 7: "lz4_raw"}


def edit_page_bytes(data: bytes, chunk: int, page: int, edit: Callable[[bytes], bytes]) -> bytes:
    """Rewrites page ``page`` of column chunk ``chunk`` (file order) as ``edit`` returns its
    decompressed bytes (levels and values; a v2 page's levels keep their length), compressed
    again; the header's sizes, the chunk's and the offset index follow, the checksum goes."""
    import pyarrow as pa

    _, footer = split(data)
    meta = chunks(footer)[chunk][1]
    offset, header, data_start, page_end = pages(data, meta)[page]
    codec = CODECS[meta.get(CM_CODEC, 0)]
    stored = data[data_start:page_end]
    v2 = header.get(PH_DATA_V2)
    levels = 0 if v2 is None else v2.get(V2_DEFINITION_BYTES, 0) + v2.get(V2_REPETITION_BYTES, 0)
    if v2 is not None and v2.get(V2_IS_COMPRESSED, True) is False:
        codec = None
    uncompressed = header.get(PH_UNCOMPRESSED, 0) - levels
    values = stored[levels:] if codec is None else pa.Codec(codec).decompress(stored[levels:], uncompressed, asbytes=True)
    edited = edit(stored[:levels] + values)
    edited_levels, edited_values = edited[:levels], edited[levels:]
    packed = edited_values if codec is None else pa.Codec(codec).compress(edited_values, asbytes=True)
    header.remove(PH_CRC)
    header.set(PH_UNCOMPRESSED, I32, levels + len(edited_values))
    header.set(PH_COMPRESSED, I32, levels + len(packed))
    new = encode(header) + edited_levels + packed
    return splice(data, offset, page_end, new, uncompressed_delta=len(edited_values) - uncompressed)


def edit_first_page_header(data: bytes, edit: Callable[[Struct], None], chunk: int = 0) -> bytes:
    """Rewrites the first page header of column chunk ``chunk`` (file order)."""
    _, footer = split(data)
    return rewrite_struct_at(data, first_page_offset(chunks(footer)[chunk][1]), edit)


def edit_page_index(data: bytes, edit: Callable[[Struct], None], chunk: int, column_index: bool = False) -> bytes:
    """Rewrites the offset index (or the column index) of column chunk ``chunk`` (file
    order), appended after the pages; the chunk points at the new one, the old one stays,
    unreferenced."""
    offset_field, length_field = (CC_CI_OFFSET, CC_CI_LENGTH) if column_index else (CC_OI_OFFSET, CC_OI_LENGTH)
    body, footer = split(data)
    cc, _ = chunks(footer)[chunk]
    index, _ = decode(body, cc.get(offset_field))
    edit(index)
    encoded = encode(index)
    cc.set(offset_field, I64, len(body))
    cc.set(length_field, I32, len(encoded))
    return join(body + encoded, footer)


def edit_bloom_header(data: bytes, edit: Callable[[Struct], None], chunk: int) -> bytes:
    """Rewrites the bloom filter header of column chunk ``chunk`` and drops the chunk's
    ``bloom_filter_length``, so that readers trust the header's size."""
    _, footer = split(data)
    data = rewrite_struct_at(data, chunks(footer)[chunk][1].get(CM_BLOOM_OFFSET), edit)
    return edit_footer(data, lambda footer: chunks(footer)[chunk][1].remove(CM_BLOOM_LENGTH))
