//! A gzip member (RFC 1952) put together from DEFLATE pieces (RFC 1951),
//! so that the catalog is compressed once, at build time, and a request
//! pays only for its own bytes.
//!
//! Every piece starts and ends on a byte boundary and leaves the stream
//! open (no final block) until [`Member::finish`]:
//!
//! - a precompressed piece is DEFLATE data that ends in a sync flush (an
//!   empty stored block) and refers back only to its own bytes, so it
//!   decodes the same after whatever came before it; with its CRC-32 and
//!   length known, the member's CRC is combined (zlib's `crc32_combine`)
//!   instead of reading its bytes again;
//! - a few bytes of the request's own (the envelope's head, a comma) go in
//!   stored blocks, which cost 5 bytes each and no compressor;
//! - a precompressed piece may also start at a block's start (after a full
//!   flush, nothing refers back before it), so the built-ins of a category
//!   the account excludes patterns from are the build's but for the blocks
//!   its exclusions fall in: from the last unit's end before an exclusion
//!   to the next block that can be used, they are compressed here
//!   ([`Member::compressed`]), on their own, as such a piece;
//! - the last piece (the account's custom patterns and the envelope's end)
//!   is compressed here, in a final block.
//!
//! `build.rs` includes this file (`#[path]`) to write the members it
//! precompresses whole, so both write the same header.

/// The gzip header: DEFLATE, no name or time (so the bytes depend on the
/// body only), no extra flags, OS "unknown".
pub const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// The compression level of what is compressed per request (the custom
/// patterns, the blocks exclusions cut into): miniz_oxide's fastest, as a
/// request should pay little for its own bytes (docs/BENCHMARKS.md,
/// "Compressed answers").
pub const TAIL_LEVEL: u8 = 1;

/// The compression level of the category streams compressed at build
/// time: miniz_oxide's highest. (The usual answers, compressed whole, are
/// zopfli's: `build.rs`.)
#[allow(dead_code)] // build.rs's
pub const BUILD_LEVEL: u8 = 10;

/// A gzip member being written.
#[derive(Debug)]
pub struct Member {
    out: Vec<u8>,
    crc: crc32fast::Hasher,
}

impl Member {
    /// A member with room for `capacity` bytes of compressed data.
    pub fn new(capacity: usize) -> Member {
        let mut out = Vec::with_capacity(HEADER.len() + capacity + 64);
        out.extend_from_slice(&HEADER);
        Member {
            out,
            crc: crc32fast::Hasher::new(),
        }
    }

    /// `bytes` as they are, in non-final stored blocks.
    pub fn stored(&mut self, bytes: &[u8]) {
        for block in bytes.chunks(usize::from(u16::MAX)) {
            // BFINAL 0, BTYPE 00 and the padding to the byte: one zero byte.
            let len = block.len() as u16;
            self.out.push(0);
            self.out.extend_from_slice(&len.to_le_bytes());
            self.out.extend_from_slice(&(!len).to_le_bytes());
            self.out.extend_from_slice(block);
        }
        self.crc.update(bytes);
    }

    /// Precompressed DEFLATE data (ending in a sync flush) of `len`
    /// uncompressed bytes whose CRC-32 is `crc`.
    pub fn precompressed(&mut self, deflate: &[u8], crc: u32, len: u64) {
        self.out.extend_from_slice(deflate);
        self.crc
            .combine(&crc32fast::Hasher::new_with_initial_len(crc, len));
    }

    /// Compresses `bytes` here, at [`TAIL_LEVEL`], as a piece that refers
    /// back only to its own bytes and ends in a sync flush.
    pub fn compressed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let (deflate, _) = sync_flushed([(bytes, false)], TAIL_LEVEL);
        self.out.extend_from_slice(&deflate);
        self.crc.update(bytes);
    }

    /// Compresses `tail` into the final block and closes the member with
    /// its CRC-32 and length.
    pub fn finish(mut self, tail: &[u8]) -> Vec<u8> {
        self.out
            .extend_from_slice(&miniz_oxide::deflate::compress_to_vec(tail, TAIL_LEVEL));
        self.crc.update(tail);
        let (crc, len) = (self.crc.clone().finalize(), self.crc.total_len());
        self.out.extend_from_slice(&crc.to_le_bytes());
        // ISIZE: the length modulo 2^32.
        self.out.extend_from_slice(&(len as u32).to_le_bytes());
        self.out
    }
}

/// `body` as one gzip member whose DEFLATE data is `deflate` (the usual
/// answers, compressed whole at build time).
#[allow(dead_code)] // build.rs's
pub fn whole(body: &[u8], deflate: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER.len() + deflate.len() + 8);
    out.extend_from_slice(&HEADER);
    out.extend_from_slice(deflate);
    out.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out
}

/// `units` compressed as one raw DEFLATE stream at `level`, with a sync
/// flush after each, a full flush where the unit says so (`true`): the
/// stream's bytes up to the end of any unit are a piece for
/// [`Member::precompressed`], and so are its bytes from the end of a unit
/// ending in a full flush (nothing after one refers back before it).
/// Returns the stream and where each unit's compressed data ends in it.
pub fn sync_flushed<'a>(
    units: impl IntoIterator<Item = (&'a [u8], bool)>,
    level: u8,
) -> (Vec<u8>, Vec<usize>) {
    use miniz_oxide::deflate::core::{
        CompressorOxide, TDEFLFlush, TDEFLStatus, compress, create_comp_flags_from_zip_params,
    };
    // Raw DEFLATE (negative window bits), the default strategy.
    let mut compressor =
        CompressorOxide::new(create_comp_flags_from_zip_params(i32::from(level), -15, 0));
    let units: Vec<(&[u8], bool)> = units.into_iter().collect();
    let total: usize = units.iter().map(|u| u.0.len()).sum();
    let mut stream = Vec::with_capacity(total / 3 + 64);
    let mut ends = Vec::with_capacity(units.len());
    // Room for a unit's compressed bytes at once, mostly; a larger output
    // takes more rounds of the loop below.
    let mut buffer = vec![0; (total / 2 + 1024).min(64 << 10)];
    for (unit, full) in units {
        let flush = if full {
            TDEFLFlush::Full
        } else {
            TDEFLFlush::Sync
        };
        let mut input = unit;
        loop {
            let (status, read, written) = compress(&mut compressor, input, &mut buffer, flush);
            assert!(
                matches!(status, TDEFLStatus::Okay | TDEFLStatus::Done),
                "deflate failed: {status:?}"
            );
            stream.extend_from_slice(&buffer[..written]);
            input = &input[read..];
            // The flush is complete once the input is taken and the output
            // did not fill the buffer.
            if input.is_empty() && written < buffer.len() {
                break;
            }
        }
        ends.push(stream.len());
    }
    (stream, ends)
}
