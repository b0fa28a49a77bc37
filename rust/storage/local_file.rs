//! File access for the reader: positioned reads that count the bytes they fetch.
//!
//! Every read is a `pread` (`FileExt::read_at`), so one open file serves any number of
//! column readers and threads without seeking; the counter feeds the `bytes_read` metric.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use crate::error::{PqsiftError, Result};

/// Opens `path` for reading if it is a regular file (links followed), with its length.
///
/// Opened non-blocking, then checked: opening a FIFO blocks until a writer comes (forever,
/// for a scan), a character device may stream without end, a directory reads nothing. Such
/// a path is an error naming it, at once.
///
/// ```
/// let error = pqsift::storage::local_file::open_regular_file(std::path::Path::new("/dev/zero")).unwrap_err();
/// assert!(error.to_string().contains("not a regular file (a character device)"), "{error}");
/// ```
pub fn open_regular_file(path: &Path) -> Result<(File, u64)> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| PqsiftError::os(path, &e))?;
    let metadata = file.metadata().map_err(|e| PqsiftError::os(path, &e))?;
    let kind = metadata.file_type();
    let special = if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else {
        Some("a special file")
    };
    match special {
        Some(what) => Err(PqsiftError::io(path, format!("not a regular file ({what})"))),
        None => Ok((file, metadata.len())),
    }
}

/// A shared, read-only Parquet file that counts the bytes read through it.
///
/// ```no_run
/// use pqsift::storage::local_file::CountingFile;
/// let file = CountingFile::open(std::path::Path::new("data/events.parquet")).unwrap();
/// println!("{} bytes so far", file.bytes_read());
/// ```
#[derive(Debug, Clone)]
pub struct CountingFile {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    file: File,
    path: PathBuf,
    len: u64,
    bytes_read: AtomicU64,
    reads: AtomicU64,
}

impl CountingFile {
    /// Opens `path`, a regular file (see [`open_regular_file`]).
    pub fn open(path: &Path) -> Result<Self> {
        let (file, len) = open_regular_file(path)?;
        Ok(Self {
            inner: Arc::new(Inner {
                file,
                path: path.to_path_buf(),
                len,
                bytes_read: AtomicU64::new(0),
                reads: AtomicU64::new(0),
            }),
        })
    }

    /// The path the file was opened at.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Read requests (`get_bytes` calls and `Read::read` calls) through this file so far.
    pub fn reads(&self) -> u64 {
        self.inner.reads.load(Ordering::Relaxed)
    }

    /// Bytes read through this file (all clones) so far.
    pub fn bytes_read(&self) -> u64 {
        self.inner.bytes_read.load(Ordering::Relaxed)
    }
}

impl Length for CountingFile {
    fn len(&self) -> u64 {
        self.inner.len
    }
}

/// What [`CountingFile::get_read`] reads ahead: the crate reads a page header through it
/// (for each page of a chunk without an offset index) in requests of a few bytes each,
/// which unbuffered were a system call per field; the page itself it then reads with
/// `get_bytes`. A header with statistics of long strings takes another read or two.
const HEADER_READ_AHEAD: usize = 512;

impl ChunkReader for CountingFile {
    type T = std::io::BufReader<PositionedReader>;

    /// A reader from `start` on, reading on demand, [`HEADER_READ_AHEAD`] bytes at a time.
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let reader = PositionedReader { inner: Arc::clone(&self.inner), position: start };
        Ok(std::io::BufReader::with_capacity(HEADER_READ_AHEAD, reader))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let end = start.checked_add(length as u64).filter(|&end| end <= self.inner.len).ok_or_else(|| {
            ParquetError::EOF(format!(
                "{}: read of {length} bytes at offset {start} passes the end of the file ({} bytes)",
                self.inner.path.display(),
                self.inner.len
            ))
        })?;
        let buffer = read_exact_at(&self.inner.file, start, (end - start) as usize)
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        self.inner.bytes_read.fetch_add(length as u64, Ordering::Relaxed);
        self.inner.reads.fetch_add(1, Ordering::Relaxed);
        Ok(Bytes::from(buffer))
    }
}

/// `length` bytes of `file` from `offset`, read into a buffer that is not zeroed first:
/// every page the crate decodes comes through here, and zeroing it only to overwrite it
/// cost a pass over every compressed byte (`std`'s `read_exact_at` takes an initialised
/// slice).
fn read_exact_at(file: &File, offset: u64, length: usize) -> std::io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let mut buffer: Vec<u8> = Vec::with_capacity(length);
    let mut filled = 0;
    while filled < length {
        let at = libc::off_t::try_from(offset + filled as u64).map_err(std::io::Error::other)?;
        // SAFETY: the destination is the unfilled part of the buffer's capacity.
        let read =
            unsafe { libc::pread(file.as_raw_fd(), buffer.as_mut_ptr().add(filled).cast(), length - filled, at) };
        match read {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n if n > 0 => filled += n as usize,
            _ => match std::io::Error::last_os_error() {
                e if e.kind() == std::io::ErrorKind::Interrupted => {}
                e => return Err(e),
            },
        }
    }
    // SAFETY: `pread` wrote every byte below `length`.
    unsafe { buffer.set_len(length) };
    Ok(buffer)
}

/// A `Read` over a [`CountingFile`] from a position on, one `pread` per call.
#[derive(Debug)]
pub struct PositionedReader {
    inner: Arc<Inner>,
    position: u64,
}

impl std::io::Read for PositionedReader {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let available = self.inner.len.saturating_sub(self.position);
        let wanted = (buffer.len() as u64).min(available) as usize;
        if wanted == 0 {
            return Ok(0);
        }
        let n = self.inner.file.read_at(&mut buffer[..wanted], self.position)?;
        self.position += n as u64;
        self.inner.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        self.inner.reads.fetch_add(1, Ordering::Relaxed);
        Ok(n)
    }
}
