//! Reading `.crx` (Chrome's package: a `Cr24` header, version 2 or 3, around a zip) and
//! `.zip` files into a [`Tree`]. Archives are untrusted: every entry name becomes a
//! [`SitePath`] or the archive is refused, links and duplicates are refused, and sizes are
//! checked as the bytes come (an entry's declared size may lie), against [`Limits`].

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use crate::error::ArchiveError;
use crate::path::SitePath;
use crate::tree::{Content, Limits, Tree};

/// What the `.crx` header said; the signature is reported, not checked (the store's keys
/// and a dump's provenance are not ours to judge).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CrxInfo {
    /// 2 or 3.
    pub version: u32,
    /// RSA (v2, v3) and ECDSA (v3) signatures the header carries.
    pub signatures: u32,
    /// For v2: the public key's length in bytes.
    pub public_key_bytes: u32,
}

/// The zip inside `bytes`: after a crx header (with what it said), or all of it.
pub fn split_crx<'a>(
    bytes: &'a [u8],
    archive: &str,
) -> Result<(Option<CrxInfo>, &'a [u8]), ArchiveError> {
    if !bytes.starts_with(b"Cr24") {
        return Ok((None, bytes));
    }
    let bad = |why: String| ArchiveError::BadCrx {
        archive: archive.to_owned(),
        why,
    };
    let word = |at: usize| -> Result<u32, ArchiveError> {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| bad(format!("ends at byte {} (truncated)", bytes.len())))
    };
    let version = word(4)?;
    let (info, start) = match version {
        2 => {
            let key = word(8)?;
            let sig = word(12)?;
            let start = 16u64 + u64::from(key) + u64::from(sig);
            (
                CrxInfo {
                    version,
                    signatures: u32::from(sig > 0),
                    public_key_bytes: key,
                },
                start,
            )
        }
        3 => {
            let len = word(8)?;
            let start = 12u64 + u64::from(len);
            let header = bytes
                .get(12..usize::try_from(start).unwrap_or(usize::MAX))
                .ok_or_else(|| {
                    bad(format!(
                        "says its header has {len} bytes, past the end of the file ({} bytes)",
                        bytes.len()
                    ))
                })?;
            let signatures = count_crx3_proofs(header)
                .map_err(|why| bad(format!("has a CrxFileHeader that is not protobuf: {why}")))?;
            (
                CrxInfo {
                    version,
                    signatures,
                    public_key_bytes: 0,
                },
                start,
            )
        }
        v => return Err(bad(format!("has version {v}; Chrome wrote 2 and 3"))),
    };
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    if start > bytes.len() {
        return Err(bad(format!(
            "says the zip starts at byte {start}, past the end of the file ({} bytes)",
            bytes.len()
        )));
    }
    Ok((Some(info), &bytes[start..]))
}

/// The proofs in a CRX3 `CrxFileHeader` (protobuf: field 2 `sha256_with_rsa`, field 3
/// `sha256_with_ecdsa`, both repeated). Written out because two field numbers are all we
/// read: a protobuf library and a schema would be more code than this walk.
fn count_crx3_proofs(mut b: &[u8]) -> Result<u32, String> {
    fn varint(b: &mut &[u8]) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = b.split_first().ok_or("a field is cut short")?;
            *b = rest;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 10 bytes".into())
    }
    let mut proofs = 0;
    while !b.is_empty() {
        let key = varint(&mut b)?;
        let skip = match key & 7 {
            0 => {
                varint(&mut b)?;
                0
            }
            1 => 8,
            2 => usize::try_from(varint(&mut b)?).map_err(|_| "a length past the header")?,
            5 => 4,
            w => return Err(format!("wire type {w}")),
        };
        if skip > b.len() {
            return Err("a length past the header".into());
        }
        b = &b[skip..];
        if key & 7 == 2 && matches!(key >> 3, 2 | 3) {
            proofs += 1;
        }
    }
    Ok(proofs)
}

/// The files of a zip (`bytes` without any crx header), checked as the module says.
pub fn read_zip(bytes: &[u8], archive: &str, limits: &Limits) -> Result<Tree, ArchiveError> {
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| ArchiveError::NotZip {
            archive: archive.to_owned(),
            why: e.to_string(),
        })?;
    if zip.len() > limits.max_entries {
        return Err(ArchiveError::TooManyEntries {
            archive: archive.to_owned(),
            max: limits.max_entries,
        });
    }
    // The zip crate keeps one entry per name, so a name given twice would pass unseen:
    // the central directory's own names are compared first.
    if let Some(names) = central_names(bytes) {
        let mut seen = std::collections::HashSet::new();
        for n in names {
            if !seen.insert(n.clone()) {
                return Err(ArchiveError::Duplicate {
                    archive: archive.to_owned(),
                    entry: n.clone(),
                    other: n,
                });
            }
        }
    }
    if let Some(count) = eocd(bytes).map(|e| e.0) {
        if count != 0xffff && usize::from(count) != zip.len() {
            return Err(ArchiveError::NotZip {
                archive: archive.to_owned(),
                why: format!(
                    "its directory counts {count} entries but {} distinct names can be read",
                    zip.len()
                ),
            });
        }
    }
    let mut tree = Tree::default();
    // Lower-cased names already taken, files and the folders above them, for duplicates
    // on a disk that ignores case, and a file that is also a folder.
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut total = 0u64;
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).map_err(|e| ArchiveError::Entry {
            archive: archive.to_owned(),
            entry: format!("#{i}"),
            why: e.to_string(),
        })?;
        let name = String::from_utf8_lossy(f.name_raw()).into_owned();
        let entry_err = |why: String| ArchiveError::Entry {
            archive: archive.to_owned(),
            entry: name.clone(),
            why,
        };
        if f.is_symlink() {
            return Err(ArchiveError::Link {
                archive: archive.to_owned(),
                entry: name,
            });
        }
        if f.encrypted() {
            return Err(entry_err("is encrypted".into()));
        }
        // Some packers write `\` separators; a name with one is refused by SitePath, so
        // say what it is.
        let is_dir = f.is_dir();
        let trimmed = name.strip_suffix('/').unwrap_or(&name);
        let path = SitePath::new(trimmed).map_err(|why| entry_err(format!("a name that {why}")))?;
        // Every folder above the entry, and the entry itself, must be new as what it is.
        let parts: Vec<&str> = path.as_str().split('/').collect();
        for k in 1..=parts.len() {
            let is_last = k == parts.len();
            let key = parts[..k].join("/").to_lowercase();
            let kind = if is_last && !is_dir { "file" } else { "dir" };
            match seen.get(&key) {
                None => {
                    seen.insert(key, format!("{kind}:{}", parts[..k].join("/")));
                }
                Some(prev) if kind == "dir" && prev.starts_with("dir:") => {}
                Some(prev) => {
                    return Err(ArchiveError::Duplicate {
                        archive: archive.to_owned(),
                        entry: name.clone(),
                        other: prev.split_once(':').map_or("", |p| p.1).to_owned(),
                    })
                }
            }
        }
        if is_dir {
            continue;
        }
        let declared = f.size();
        let packed = f.compressed_size().max(1);
        let bomb = |what: &'static str, limit: String| ArchiveError::Bomb {
            archive: archive.to_owned(),
            entry: name.clone(),
            what,
            limit,
        };
        let cap = limits
            .max_entry
            .min(limits.max_total.saturating_sub(total))
            .min(
                packed
                    .saturating_mul(limits.max_ratio)
                    .max(limits.ratio_from),
            );
        if declared > cap {
            return Err(too_big(&bomb, declared, limits, total, packed));
        }
        let mut data = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
        (&mut f)
            .take(cap + 1)
            .read_to_end(&mut data)
            .map_err(|e| entry_err(format!("cannot be unpacked: {e}")))?;
        let got = data.len() as u64;
        if got > cap {
            return Err(too_big(&bomb, got, limits, total, packed));
        }
        if got != declared {
            return Err(entry_err(format!(
                "unpacks to {got} bytes, but the archive says {declared}"
            )));
        }
        total += got;
        tree.files.insert(path, Content::Bytes(Arc::from(data)));
        if tree.files.len() > limits.max_entries {
            return Err(ArchiveError::TooManyEntries {
                archive: archive.to_owned(),
                max: limits.max_entries,
            });
        }
    }
    Ok(tree)
}

/// The end-of-central-directory record: (entries, directory size, directory offset).
fn eocd(b: &[u8]) -> Option<(u16, u32, u32)> {
    // The record is 22 bytes plus a comment of up to 65535.
    let from = b.len().saturating_sub(22 + 0xffff);
    let at = (from..=b.len().checked_sub(22)?)
        .rev()
        .find(|&i| b[i..i + 4] == *b"PK\x05\x06")?;
    let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    Some((u16_at(at + 10), u32_at(at + 12), u32_at(at + 16)))
}

/// The names in the central directory, in order; `None` where it cannot be walked as
/// a plain (not zip64) directory, in which case the zip crate's own reading decides.
/// Written out because the zip crate hides a name given twice (module documentation).
fn central_names(b: &[u8]) -> Option<Vec<String>> {
    let (count, _, offset) = eocd(b)?;
    if count == 0xffff || offset == 0xffff_ffff {
        return None;
    }
    let mut at = usize::try_from(offset).ok()?;
    let mut names = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        let h = b.get(at..at + 46)?;
        if h[..4] != *b"PK\x01\x02" {
            return None;
        }
        let len = |i: usize| usize::from(u16::from_le_bytes([h[i], h[i + 1]]));
        let (n, extra, comment) = (len(28), len(30), len(32));
        let name = b.get(at + 46..at + 46 + n)?;
        names.push(String::from_utf8_lossy(name).into_owned());
        at += 46 + n + extra + comment;
    }
    Some(names)
}

/// Which limit `size` broke.
fn too_big(
    bomb: &dyn Fn(&'static str, String) -> ArchiveError,
    size: u64,
    limits: &Limits,
    total: u64,
    packed: u64,
) -> ArchiveError {
    if size > limits.max_entry {
        bomb(
            "the size one file may have",
            format!("{} bytes", limits.max_entry),
        )
    } else if total + size > limits.max_total {
        bomb(
            "the size the whole archive may unpack to",
            format!("{} bytes", limits.max_total),
        )
    } else {
        bomb(
            "the packed size times the largest ratio",
            format!("{packed} x {}", limits.max_ratio),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crx3_proofs_are_counted_and_bad_headers_named() {
        // field 2 (len 3), field 3 (len 1), field 10000 (len 2)
        let header = [0x12, 3, 1, 2, 3, 0x1a, 1, 9, 0x82, 0xf1, 0x04, 2, 0, 0];
        assert_eq!(count_crx3_proofs(&header), Ok(2));
        assert!(count_crx3_proofs(&[0x12, 9, 1]).is_err());
        assert!(count_crx3_proofs(&[0x0b]).is_err());
        let mut crx = b"Cr24".to_vec();
        crx.extend(3u32.to_le_bytes());
        crx.extend((header.len() as u32).to_le_bytes());
        crx.extend(header);
        crx.extend(b"PK");
        let (info, zip) = split_crx(&crx, "a.crx").unwrap();
        assert_eq!(info.unwrap().signatures, 2);
        assert_eq!(zip, b"PK");
        let e = split_crx(&crx[..14], "a.crx").unwrap_err().to_string();
        assert!(e.contains("past the end of the file"), "{e}");
        let mut v4 = b"Cr24".to_vec();
        v4.extend(4u32.to_le_bytes());
        let e = split_crx(&v4, "a.crx").unwrap_err().to_string();
        assert!(e.contains("version 4"), "{e}");
        let e = split_crx(b"Cr24\x02\0", "a.crx").unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
    }
}
