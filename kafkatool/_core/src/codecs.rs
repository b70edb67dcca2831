//! The four record codecs as Kafka reads them (Kafka's `Compression` implementations in
//! `org.apache.kafka.common.compress`), under an explicit decompression cap.
//!
//! This is the fast twin of `kafkatool/schema/codecs.py`, which stays the reference: every function here
//! returns `Some(bytes)` only for input the Python path decodes to the same bytes, and `None` ("hand back")
//! for anything it refuses or is not sure of (damage, the cap exceeded, a layout the Python path would reject
//! with its own message). The caller then runs the Python path, which produces the exact `CodecError`. So the
//! error texts live in one place, and a disagreement can only make the native path slower, never different.
//!
//! - gzip (`GzipCompression`, `java.util.zip.GZIPInputStream`): concatenated members, each header as zlib
//!   checks it, raw deflate (miniz_oxide, refusing distances before the member's start as zlib does), the
//!   CRC-32 and ISIZE trailer; bytes after a member that are not a whole member header are ignored.
//! - snappy (`SnappyCompression`, snappy-java's `SnappyInputStream`): the xerial header (version >= 1) then
//!   big-endian length-prefixed raw blocks, a repeated header skipped; no header: one raw block.
//! - lz4 (`Lz4Compression`, Kafka's `Lz4BlockInputStream`): the frame descriptor checks, the header checksum
//!   ignored for magic 0 (KAFKA-3160), block checksums when flagged, the content checksum read, not verified.
//!   Blocks are decoded by `lz4_block`, a model of liblz4 1.10.0's `LZ4_decompress_safe` (its fast and safe
//!   loops, each with its own end-of-block rules), the decoder of Kafka's lz4-java and of the Python path:
//!   it refuses what liblz4 refuses and decodes the rest to the same bytes (offset 0, whose output liblz4 takes
//!   from the unwritten buffer, is handed back).
//! - zstd (`ZstdCompression`, zstd-jni's `ZstdInputStream`): one or more frames, skippable frames allowed. Only
//!   frames with a content checksum are decoded here (ruzstd accepts some corrupt blocks libzstd refuses, and
//!   without a checksum the difference cannot be seen); Kafka's producers write none, so zstd batches mostly
//!   take the Python path (libzstd, C).

use std::io::Read;

use miniz_oxide::inflate::core::{decompress as inflate, inflate_flags, DecompressorOxide as InflateState};
use miniz_oxide::inflate::TINFLStatus;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::defect::guard;

const GZIP_FIXED_HEADER: usize = 10;
const GZIP_FHCRC: u8 = 0x02;
const GZIP_FEXTRA: u8 = 0x04;
const GZIP_FNAME: u8 = 0x08;
const GZIP_FCOMMENT: u8 = 0x10;
const GZIP_RESERVED: u8 = 0xE0;
const GZIP_STEP: usize = 256 << 10;
/// Raw deflate, all input given at once, decoded into one growing buffer (the history is the member's output).
const INFLATE_FLAGS: u32 = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;

const SNAPPY_MAGIC: &[u8; 8] = b"\x82SNAPPY\x00";
const SNAPPY_HEADER: usize = 16;
const SNAPPY_MIN_VERSION: i32 = 1;

const LZ4_MAGIC: u32 = 0x184D_2204;
const LZ4_INCOMPRESSIBLE: u32 = 0x8000_0000;
const LZ4_FLG_INDEPENDENT: u8 = 0x20;
const LZ4_FLG_BLOCK_CHECKSUM: u8 = 0x10;
const LZ4_FLG_CONTENT_SIZE: u8 = 0x08;
const LZ4_FLG_CONTENT_CHECKSUM: u8 = 0x04;
const LZ4_FLG_RESERVED: u8 = 0x03;
const LZ4_BD_RESERVED: u8 = 0x8F;
/// liblz4's parsing constants (`lib/lz4.c`): a literal run ending within `MFLIMIT` bytes of the output capacity
/// must be the last sequence; the last `LASTLITERALS` bytes are literals; `RUN_MASK` (15) in a token's nibble
/// says a length extension follows; the fast loop runs while `FASTLOOP_SAFE_DISTANCE` bytes of output are left.
const LZ4_MFLIMIT: usize = 12;
const LZ4_LASTLITERALS: usize = 5;
const LZ4_RUN_MASK: usize = 15;
const LZ4_MINMATCH: usize = 4;
const LZ4_FASTLOOP_SAFE_DISTANCE: usize = 64;

const ZSTD_MAGIC: u32 = 0xFD2F_B528;
const ZSTD_SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
const ZSTD_SKIPPABLE: u32 = 0x184D_2A50;
/// libzstd's default window limit (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`): larger windows are refused there.
const ZSTD_WINDOW_LIMIT: u64 = 1 << 27;
const ZSTD_STEP: usize = 64 << 10;
const ZSTD_CHECKSUM_FLAG: u8 = 0x04;

/// Codec ids of Kafka's `CompressionType`.
pub const GZIP: u8 = 1;
pub const SNAPPY: u8 = 2;
pub const LZ4: u8 = 3;
pub const ZSTD: u8 = 4;

/// Decompress `data` as Kafka reads codec `codec` (magic matters for lz4 only), never past `max_output`
/// bytes; `None` hands the payload back to the Python reference path (see the module notes).
pub fn decompress(codec: u8, data: &[u8], magic: i8, max_output: usize) -> Option<Vec<u8>> {
    match codec {
        GZIP => gunzip(data, max_output),
        SNAPPY => unsnappy(data, max_output),
        LZ4 => unlz4(data, magic, max_output),
        ZSTD => unzstd(data, max_output),
        _ => None,
    }
}

fn u16le(b: &[u8], pos: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(pos..pos + 2)?.try_into().ok()?))
}

fn u32le(b: &[u8], pos: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(pos..pos + 4)?.try_into().ok()?))
}

fn i32be(b: &[u8], pos: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(pos..pos + 4)?.try_into().ok()?))
}

// --- gzip -----------------------------------------------------------------------------------------

/// The length of the whole, well-formed gzip member header at the start of `data` (zlib's `inflate` header
/// states, and `GZIPInputStream.readHeader`), or `None`.
/// More than deflate's largest expansion (258 bytes from a 2-bit code: 1032 to 1).
const DEFLATE_MAX_RATIO: usize = 1100;

fn gzip_header(data: &[u8]) -> Option<usize> {
    if data.len() < GZIP_FIXED_HEADER || data[0] != 0x1F || data[1] != 0x8B || data[2] != 8 {
        return None;
    }
    let flags = data[3];
    let mut pos = GZIP_FIXED_HEADER;
    if flags & GZIP_FEXTRA != 0 {
        let xlen = u16le(data, pos)? as usize;
        pos += 2 + xlen;
    }
    for flag in [GZIP_FNAME, GZIP_FCOMMENT] {
        if flags & flag != 0 {
            let end = data.get(pos..)?.iter().position(|&b| b == 0)?;
            pos += end + 1;
        }
    }
    if flags & GZIP_FHCRC != 0 {
        let stored = u16le(data, pos)?;
        let mut crc = flate2::Crc::new();
        crc.update(&data[..pos]);
        if stored != (crc.sum() & 0xFFFF) as u16 {
            return None;
        }
        pos += 2;
    }
    if data.len() < pos {
        return None;
    }
    Some(pos)
}

fn gunzip(raw: &[u8], max_output: usize) -> Option<Vec<u8>> {
    // Reserved once, never moved: no member inflates past 1032 times its size, nor the whole past the cap (a
    // growing Vec would copy itself, holding twice the output at its last step).
    let mut out: Vec<u8> = Vec::with_capacity(max_output.saturating_add(1).min(raw.len().saturating_mul(DEFLATE_MAX_RATIO)));
    let mut start = 0usize;
    loop {
        let member = &raw[start..];
        // zlib refuses the reserved flag bits in the first member's header; the Python path words that.
        if member.len() > 3 && member[3] & GZIP_RESERVED != 0 {
            return None;
        }
        let header = gzip_header(member)?;
        // Raw deflate (miniz_oxide) into the member's output itself, not a wrapping window: a distance reaching
        // before the member's first byte is then refused, as zlib refuses it ("invalid distance too far back").
        let mut inflater = InflateState::default();
        let body = &member[header..];
        let member_start = out.len();
        let mut consumed = 0usize;
        loop {
            let room = (max_output + 1 - out.len()).min(GZIP_STEP);
            let at = out.len();
            out.resize(at + room, 0);
            let (status, used, produced) =
                inflate(&mut inflater, &body[consumed..], &mut out[member_start..], at - member_start, INFLATE_FLAGS);
            out.truncate(at + produced);
            consumed += used;
            if out.len() > max_output {
                return None;
            }
            match status {
                TINFLStatus::Done => break,
                TINFLStatus::HasMoreOutput => continue,
                _ => return None, // damage, or truncated: no end of stream
            }
        }
        let trailer = header + consumed;
        let crc_stored = u32le(member, trailer)?;
        let size_stored = u32le(member, trailer + 4)?;
        let mut crc = flate2::Crc::new();
        crc.update(&out[member_start..]);
        if crc.sum() != crc_stored || ((out.len() - member_start) as u32) != size_stored {
            return None;
        }
        let rest = &member[trailer + 8..];
        if gzip_header(rest).is_none() {
            return Some(out);
        }
        start += trailer + 8;
    }
}

// --- snappy ---------------------------------------------------------------------------------------

fn snappy_raw(block: &[u8], budget: usize, out: &mut Vec<u8>) -> Option<()> {
    let size = snap::raw::decompress_len(block).ok()?;
    if size > budget {
        return None;
    }
    let at = out.len();
    out.resize(at + size, 0);
    let n = snap::raw::Decoder::new().decompress(block, &mut out[at..]).ok()?;
    out.truncate(at + n);
    Some(())
}

fn unsnappy(raw: &[u8], max_output: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    if raw.is_empty() {
        return None;
    }
    if !raw.starts_with(SNAPPY_MAGIC) {
        snappy_raw(raw, max_output, &mut out)?;
        return Some(out);
    }
    let header = |pos: usize| -> Option<usize> {
        let version = i32be(raw, pos + 8)?;
        i32be(raw, pos + 12)?;
        (version >= SNAPPY_MIN_VERSION).then_some(pos + SNAPPY_HEADER)
    };
    let mut pos = header(0)?;
    while pos < raw.len() {
        let length = i32be(raw, pos)?;
        if raw[pos..].starts_with(SNAPPY_MAGIC) {
            pos = header(pos)?;
            continue;
        }
        pos += 4;
        if length < 0 || length as usize > raw.len() - pos {
            return None;
        }
        let length = length as usize;
        snappy_raw(&raw[pos..pos + length], max_output - out.len(), &mut out)?;
        pos += length;
    }
    Some(out)
}

// --- lz4 ------------------------------------------------------------------------------------------

fn xxh32(data: &[u8]) -> u32 {
    twox_hash::XxHash32::oneshot(0, data)
}

/// An lz4 length's extension bytes from `*ip` (each 255 says another follows), as liblz4's
/// `read_variable_length` reads them: `None` when a byte would be read at or past `stop` (its `ilimit`).
#[inline(always)]
fn lz4_run_length(block: &[u8], ip: &mut usize, stop: usize) -> Option<usize> {
    let mut length = 0usize;
    loop {
        if *ip >= stop {
            return None;
        }
        let s = *block.get(*ip)? as usize;
        *ip += 1;
        length += s;
        if s != 255 {
            return Some(length);
        }
    }
}

/// Copy `length` bytes from `offset` bytes before `op` to `op` in `dst` (`1 <= offset <= op`, the end within
/// `dst`): an overlapping match repeats its first `offset` bytes. Matches 8 or more bytes back are copied in
/// chunks of 16 or 8 when `dst` has the room past their end (the bytes past it are rewritten later, as liblz4's
/// wild copies do); a nearer overlapping match is copied in rounds that double.
#[inline(always)]
fn lz4_copy_match(dst: &mut [u8], op: usize, offset: usize, length: usize) -> Option<()> {
    let start = op.checked_sub(offset)?;
    let end = op.checked_add(length)?;
    if end > dst.len() {
        return None; // not reached: the callers check the end against the capacity
    }
    if offset >= 16 && end + 16 <= dst.len() {
        if length <= 16 {
            dst.copy_within(start..start + 16, op);
            return Some(());
        }
        for k in (0..length).step_by(16) {
            dst.copy_within(start + k..start + k + 16, op + k);
        }
    } else if offset >= 8 && end + 8 <= dst.len() {
        for k in (0..length).step_by(8) {
            dst.copy_within(start + k..start + k + 8, op + k);
        }
    } else if offset >= length {
        dst.copy_within(start..end - offset, op);
    } else if offset == 1 {
        let byte = *dst.get(start)?;
        dst.get_mut(op..end)?.fill(byte);
    } else {
        let mut done = 0;
        while done < length {
            let n = (offset + done).min(length - done);
            dst.copy_within(start..start + n, op + done);
            done += n;
        }
    }
    Some(())
}

/// Copy `length` literals from `src[ip..]` to `dst[op..]`, 16 bytes at once when both have the room.
#[inline(always)]
fn lz4_copy_literals(src: &[u8], ip: usize, dst: &mut [u8], op: usize, length: usize) -> Option<()> {
    if length <= 16 && ip + 16 <= src.len() && op + 16 <= dst.len() {
        dst.get_mut(op..op + 16)?.copy_from_slice(src.get(ip..ip + 16)?);
    } else {
        dst.get_mut(op..op + length)?.copy_from_slice(src.get(ip..ip + length)?);
    }
    Some(())
}

/// The fast loop's common sequence in one step: short literals (0-14, with 17 bytes of input left), a short
/// match (4-18 bytes) 8 or more bytes back ending more than `FASTLOOP_SAFE_DISTANCE` bytes before the capacity, so
/// that no end rule of either loop applies. The positions after it, or `None` (nothing written) for any other
/// sequence, which `lz4_block` then takes rule by rule. Copies 16 literal bytes and 18 match bytes (in 8-byte
/// steps when the match is nearer than that), as liblz4 does: the bytes past the ends are rewritten next.
#[inline(always)]
fn lz4_short_sequence(src: &[u8], dst: &mut [u8], ip: usize, op: usize) -> Option<(usize, usize)> {
    let token = *src.get(ip)?;
    let (lit, length) = ((token >> 4) as usize, (token & 0x0F) as usize + LZ4_MINMATCH);
    let chunk: &[u8; 17] = src.get(ip + 1..ip + 18)?.try_into().ok()?;
    if lit == LZ4_RUN_MASK || length == LZ4_RUN_MASK + LZ4_MINMATCH {
        return None;
    }
    let offset = u16::from_le_bytes([chunk[lit], chunk[lit + 1]]) as usize;
    let match_op = op + lit;
    let end = match_op + length;
    if offset < 8 || offset > match_op || end + LZ4_FASTLOOP_SAFE_DISTANCE >= dst.len() {
        return None;
    }
    dst.get_mut(op..op + 16)?.copy_from_slice(&chunk[..16]);
    let start = match_op - offset;
    if offset >= 18 {
        let bytes: [u8; 18] = dst.get(start..start + 18)?.try_into().ok()?;
        dst.get_mut(match_op..match_op + 18)?.copy_from_slice(&bytes);
    } else {
        for at in [0, 8, 16] {
            let bytes: [u8; 8] = dst.get(start + at..start + at + 8)?.try_into().ok()?;
            dst.get_mut(match_op + at..match_op + at + 8)?.copy_from_slice(&bytes);
        }
    }
    Some((ip + 1 + lit + 2, end))
}

/// Decode one lz4 block into `dst` (its length the capacity; what it holds does not matter), exactly as liblz4
/// 1.10.0's `LZ4_decompress_safe(src, dst, src.len(), capacity)` does on x86_64 (the `LZ4_decompress_generic`
/// instance with `decode_full_block`, `noDict` and `LZ4_FAST_DEC_LOOP`), which is what Kafka's lz4-java (1.10.1
/// and 1.11.2 bundle liblz4 1.10.0, through JNI) and the Python path (cramjam, liblz4) run: the bytes decoded, or
/// `None` where liblz4 refuses the block, and where it would copy from an offset of 0 (its output is then
/// whatever the buffer held: handed back). Written from liblz4's `lib/lz4.c`, not translated from it.
///
/// liblz4 decodes in two loops with different end rules, modelled here step by step:
/// - the fast loop, while at least `FASTLOOP_SAFE_DISTANCE` (64) bytes of output are left: short literals are
///   taken while 17 bytes of input remain, long ones while 32 bytes of input and of output remain; a match
///   that would end within 64 bytes of the capacity moves to the safe loop's match copy;
/// - the safe loop (never left again): a shortcut for short literals and short matches (no end-of-output rule
///   for the match) while 16 bytes of input and 32 of output remain; otherwise a literal run ending within
///   `MFLIMIT` bytes of the capacity or 8 bytes of the input end must end the block exactly at the input end,
///   and a match must end `LASTLITERALS` bytes before the capacity.
///
/// Length extensions stop 15 bytes (literals) and 4 bytes (matches) before the input end, as
/// `read_variable_length` is told; an offset reaching before the block start is refused in both loops.
fn lz4_block(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let n = src.len();
    let capacity = dst.len();
    if n == 0 || capacity == 0 {
        return None; // liblz4: an empty block is an error; capacity 0 never occurs in a frame
    }
    let lit_stop = n.saturating_sub(LZ4_RUN_MASK);
    let match_stop = n.saturating_sub(LZ4_MINMATCH);
    let mut fast = capacity >= LZ4_FASTLOOP_SAFE_DISTANCE;
    let (mut ip, mut op) = (0usize, 0usize);
    loop {
        if fast {
            if let Some((next_ip, next_op)) = lz4_short_sequence(src, dst, ip, op) {
                (ip, op) = (next_ip, next_op);
                continue;
            }
        }
        let token = *src.get(ip)?;
        ip += 1;
        let mut lit = (token >> 4) as usize;
        let mut shortcut = false;
        let safe_literal = if fast {
            if lit == LZ4_RUN_MASK {
                lit = lit.checked_add(lz4_run_length(src, &mut ip, lit_stop)?)?;
                op.checked_add(lit)?.checked_add(32)? > capacity || ip.checked_add(lit)?.checked_add(32)? > n
            } else {
                ip + 17 > n
            }
        } else if lit != LZ4_RUN_MASK && ip + 16 < n && op + 32 <= capacity {
            shortcut = true;
            false
        } else {
            if lit == LZ4_RUN_MASK {
                lit = lit.checked_add(lz4_run_length(src, &mut ip, lit_stop)?)?;
            }
            true
        };
        let lit_end = ip.checked_add(lit)?;
        let lit_op = op.checked_add(lit)?;
        if safe_literal {
            fast = false;
            if lit_op.checked_add(LZ4_MFLIMIT)? > capacity || lit_end.checked_add(2 + 1 + LZ4_LASTLITERALS)? > n {
                // the last sequence: its literals must end the input exactly, within the capacity
                if lit_end != n || lit_op > capacity {
                    return None;
                }
                dst.get_mut(op..lit_op)?.copy_from_slice(src.get(ip..lit_end)?);
                return Some(lit_op);
            }
        }
        lz4_copy_literals(src, ip, dst, op, lit)?;
        ip = lit_end;
        op = lit_op;
        let offset = u16le(src, ip)? as usize;
        ip += 2;
        if offset == 0 {
            return None; // liblz4 copies unwritten bytes: left to the Python path
        }
        let mut length = (token & 0x0F) as usize;
        if shortcut && length != LZ4_RUN_MASK && offset >= 8 && offset <= op {
            length += LZ4_MINMATCH; // the shortcut's 18-byte copy, no end-of-output rule
            lz4_copy_match(dst, op, offset, length)?;
            op += length;
            continue;
        }
        if length == LZ4_RUN_MASK {
            length = length.checked_add(lz4_run_length(src, &mut ip, match_stop)?)?;
        }
        length += LZ4_MINMATCH;
        let end = op.checked_add(length)?;
        if fast && end.checked_add(LZ4_FASTLOOP_SAFE_DISTANCE)? >= capacity {
            fast = false; // to the safe loop's match copy
        }
        if offset > op || (!fast && end.checked_add(LZ4_LASTLITERALS)? > capacity) {
            return None;
        }
        lz4_copy_match(dst, op, offset, length)?;
        op = end;
    }
}

fn unlz4(raw: &[u8], magic: i8, max_output: usize) -> Option<Vec<u8>> {
    if raw.len() < 6 || u32le(raw, 0)? != LZ4_MAGIC {
        return None;
    }
    let (flg, bd) = (raw[4], raw[5]);
    if flg >> 6 != 1 || flg & LZ4_FLG_RESERVED != 0 || flg & LZ4_FLG_INDEPENDENT == 0 {
        return None;
    }
    let max_block: usize = match (bd >> 4) & 0x07 {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        _ => return None,
    };
    if bd & LZ4_BD_RESERVED != 0 {
        return None;
    }
    let block_checksum = flg & LZ4_FLG_BLOCK_CHECKSUM != 0;
    let content_checksum = flg & LZ4_FLG_CONTENT_CHECKSUM != 0;
    let mut pos = 6 + if flg & LZ4_FLG_CONTENT_SIZE != 0 { 8 } else { 0 };
    if raw.len() <= pos {
        return None;
    }
    // Magic 0 writers hashed the frame magic too (KAFKA-3160); Kafka does not check the byte for magic 0.
    if magic != 0 && raw[pos] as u32 != (xxh32(&raw[4..pos]) >> 8) & 0xFF {
        return None;
    }
    pos += 1;
    // `out[..written]` is the output; a compressed block is decoded in place after it (`out` grown to a block's
    // capacity past `written`, zeroed once: each block only adds what the one before it used).
    let mut out: Vec<u8> = Vec::new();
    let mut written = 0usize;
    loop {
        let size = u32le(raw, pos)?;
        pos += 4;
        if size == 0 {
            if content_checksum && raw.len() - pos < 4 {
                return None;
            }
            out.truncate(written);
            return Some(out);
        }
        let stored = size & LZ4_INCOMPRESSIBLE != 0;
        let size = (size & !LZ4_INCOMPRESSIBLE) as usize;
        if size > max_block || raw.len() - pos < size {
            return None;
        }
        let block = &raw[pos..pos + size];
        if stored {
            if written + size > max_output {
                return None;
            }
            out.truncate(written);
            out.extend_from_slice(block);
            written += size;
        } else {
            out.resize(written + max_block, 0);
            written += lz4_block(block, out.get_mut(written..)?)?;
            if written > max_output {
                return None;
            }
        }
        pos += size;
        if block_checksum {
            if u32le(raw, pos)? != xxh32(block) {
                return None;
            }
            pos += 4;
        }
    }
}

// --- zstd -----------------------------------------------------------------------------------------

/// What a zstd frame header declares: (content size if declared, window size, header is acceptable).
fn zstd_header(raw: &[u8], pos: usize) -> Option<(Option<u64>, u64)> {
    let fhd = *raw.get(pos + 4)?;
    let fcs_flag = fhd >> 6;
    let single_segment = (fhd >> 5) & 1 == 1;
    if fhd & 0x08 != 0 || fhd & 0x03 != 0 {
        return None; // reserved bit, or a dictionary id (no dictionary is ever given)
    }
    let mut at = pos + 5;
    let mut window: u64 = 0;
    if !single_segment {
        let wd = *raw.get(at)?;
        at += 1;
        let exponent = (wd >> 3) as u64;
        let base = 1u64 << (10 + exponent);
        window = base + (base / 8) * (wd & 0x07) as u64;
    }
    let size_len = match (fcs_flag, single_segment) {
        (0, false) => 0,
        (0, true) => 1,
        (1, _) => 2,
        (2, _) => 4,
        _ => 8,
    };
    let declared = if size_len == 0 {
        None
    } else {
        let bytes = raw.get(at..at + size_len)?;
        let mut value = 0u64;
        for (i, b) in bytes.iter().enumerate() {
            value |= (*b as u64) << (8 * i);
        }
        Some(if size_len == 2 { value + 256 } else { value })
    };
    if single_segment {
        window = declared?;
    }
    Some((declared, window))
}

fn unzstd(raw: &[u8], max_output: usize) -> Option<Vec<u8>> {
    if raw.is_empty() {
        return None;
    }
    let mut out: Vec<u8> = Vec::new();
    let mut pos = 0usize;
    let mut decoder = ruzstd::decoding::FrameDecoder::new();
    while pos < raw.len() {
        let frame_magic = u32le(raw, pos)?;
        if frame_magic & ZSTD_SKIPPABLE_MASK == ZSTD_SKIPPABLE {
            let length = u32le(raw, pos + 4)? as usize;
            if raw.len() - pos - 8 < length {
                return None;
            }
            pos += 8 + length;
            continue;
        }
        if frame_magic != ZSTD_MAGIC {
            return None;
        }
        // libzstd rejects corrupt blocks that ruzstd decodes to other bytes: only a frame with a content
        // checksum (verified below) is decoded here; the others are handed back to libzstd (Python path).
        if raw.get(pos + 4)? & ZSTD_CHECKSUM_FLAG == 0 {
            return None;
        }
        let (declared, window) = zstd_header(raw, pos)?;
        if window > ZSTD_WINDOW_LIMIT {
            return None;
        }
        if let Some(size) = declared {
            if size > (max_output - out.len()) as u64 {
                return None;
            }
        }
        let mut source: &[u8] = &raw[pos..];
        decoder.reset(&mut source).ok()?;
        let frame_start = out.len();
        loop {
            let finished = decoder
                .decode_blocks(&mut source, ruzstd::decoding::BlockDecodingStrategy::UptoBytes(ZSTD_STEP))
                .ok()?;
            decoder.collect_to_writer(&mut out).ok()?;
            if out.len() > max_output {
                return None;
            }
            if finished {
                break;
            }
        }
        decoder.collect_to_writer(&mut out).ok()?;
        if out.len() > max_output {
            return None;
        }
        if let Some(stored) = decoder.get_checksum_from_data() {
            if Some(stored) != decoder.get_calculated_checksum() {
                return None;
            }
        }
        if let Some(size) = declared {
            if (out.len() - frame_start) as u64 != size {
                return None;
            }
        }
        let used = raw.len() - pos - source.len();
        if used == 0 {
            return None;
        }
        pos += used;
    }
    Some(out)
}

/// Read `n` bytes of a reader; used by tests only.
#[allow(dead_code)]
fn read_all(mut r: impl Read) -> Vec<u8> {
    let mut v = Vec::new();
    let _ = r.read_to_end(&mut v);
    v
}

/// `decompress(codec, data, magic, max_output)`: the decompressed bytes, or `None` to run the Python path.
#[pyfunction]
#[pyo3(name = "decompress")]
fn py_decompress<'py>(
    py: Python<'py>,
    codec: u8,
    data: &[u8],
    magic: i8,
    max_output: usize,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    guard("decompress", || {
        let out = py.detach(|| decompress(codec, data, magic, max_output));
        Ok(out.map(|v| PyBytes::new(py, &v)))
    })
}

/// Add this module's Python functions to `kafkatool._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_decompress, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_handed_back() {
        for codec in [GZIP, SNAPPY, LZ4, ZSTD] {
            assert_eq!(decompress(codec, b"", 2, 1 << 20), None);
            assert_eq!(decompress(codec, b"\x00\x01\x02garbage", 2, 1 << 20), None);
        }
    }

    #[test]
    fn gzip_round_trip_and_cap() {
        use flate2::write::GzEncoder;
        use std::io::Write;
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&data).unwrap();
        let gz = enc.finish().unwrap();
        assert_eq!(decompress(GZIP, &gz, 2, 1 << 20).as_deref(), Some(&data[..]));
        assert_eq!(decompress(GZIP, &gz, 2, 1000), None);
        let mut two = gz.clone();
        two.extend_from_slice(&gz);
        two.extend_from_slice(b"trailing");
        assert_eq!(decompress(GZIP, &two, 2, 1 << 20).map(|v| v.len()), Some(200_000));
        assert_eq!(decompress(GZIP, &gz[..gz.len() - 3], 2, 1 << 20), None);
        let _ = read_all(&gz[..]);
    }

    fn lz4(block: &[u8], capacity: usize) -> Option<Vec<u8>> {
        let mut dst = vec![0xAA; capacity];
        let n = lz4_block(block, &mut dst)?;
        dst.truncate(n);
        Some(dst)
    }

    #[test]
    fn lz4_blocks_as_liblz4_decodes_them() {
        let data: Vec<u8> = (0..65_536u32).map(|i| (i % 97) as u8).collect();
        let block = lz4_flex::block::compress(&data);
        assert_eq!(lz4(&block, 65_536).as_deref(), Some(&data[..])); // a full 64 KiB block, as producers write
        assert_eq!(lz4(&block, 65_000), None); // past the capacity
        assert_eq!(lz4(&block[..block.len() - 1], 65_536), None); // truncated
        // literals "abcd", a match of 4 at offset 4, then no final literals: liblz4 refuses (last 5 bytes)
        assert_eq!(lz4(&[0x40, b'a', b'b', b'c', b'd', 4, 0, 0x00], 1 << 16), None);
        assert_eq!(lz4(&[0x50, b'a', b'b', b'c', b'd', b'e'], 1 << 16).as_deref(), Some(&b"abcde"[..]));
        assert_eq!(lz4(&[0x00], 1 << 16).as_deref(), Some(&b""[..]));
        assert_eq!(lz4(&[], 1 << 16), None);
        // "ab", a match of 20 at offset 2 (overlapping), then 5 literals
        let mut seq = vec![0x2F, b'a', b'b', 2, 0, 1, 0x50];
        seq.extend_from_slice(b"vwxyz");
        let want = [&b"ab".repeat(11)[..], b"vwxyz"].concat();
        assert_eq!(lz4(&seq, 1 << 16).as_deref(), Some(&want[..]));
        seq[3] = 3; // offset 3 reaches before the block
        assert_eq!(lz4(&seq, 1 << 16), None);
        seq[3] = 0; // offset 0: handed back
        assert_eq!(lz4(&seq, 1 << 16), None);
    }

    #[test]
    fn lz4_fast_and_safe_loop_end_rules() {
        // 10 literals, a match of 4 at offset 1, then "wxyz" (the 10 literals end 7 bytes before the input end):
        // the fast loop (64 KiB of room) and the safe loop's shortcut (63) take it; at 20 the safe loop's
        // literal rule applies (within MFLIMIT of the capacity: must be the last sequence) and refuses it
        let mut seq = vec![0xA0];
        seq.extend_from_slice(b"abcdefghij");
        seq.extend_from_slice(&[1, 0, 0x40]);
        seq.extend_from_slice(b"wxyz");
        let want = b"abcdefghijjjjjwxyz";
        assert_eq!(lz4(&seq, 1 << 16).as_deref(), Some(&want[..]));
        assert_eq!(lz4(&seq, 63).as_deref(), Some(&want[..]));
        assert_eq!(lz4(&seq, 20), None);
        // 14 literals and a match of 18 ending exactly at the capacity (32), then an empty last run: the safe
        // loop's shortcut does not check the last-5-literals rule, so liblz4 accepts it; at 31 it is refused
        let mut end = vec![0xEE];
        end.extend_from_slice(b"abcdefghijklmn");
        end.extend_from_slice(&[8, 0, 0x00]);
        let want = [&b"abcdefghijklmn"[..], b"ghijklmnghijklmngh"].concat();
        assert_eq!(lz4(&end, 32).as_deref(), Some(&want[..]));
        assert_eq!(lz4(&end, 1 << 16).as_deref(), Some(&want[..]));
        assert_eq!(lz4(&end, 31), None);
        // a match ending 1 byte before the capacity through the safe loop's match copy: refused
        assert_eq!(lz4(&[0x15, b'a', 1, 0, 0x00], 11), None);
    }

    #[test]
    fn snappy_raw_and_lz4_block() {
        let data: Vec<u8> = (0..70_000u32).map(|i| (i % 13) as u8).collect();
        let block = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(SNAPPY, &block, 2, 1 << 20).as_deref(), Some(&data[..]));
        assert_eq!(decompress(SNAPPY, &block, 2, 100), None);
    }
}
