//! pexe2wasm-site: archives as untrusted input, and the sites built from them.

mod archives;
mod sites;

use std::io::Write;

/// A zip made by the zip crate: (name, bytes) files, deflated.
pub fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        w.start_file(*name, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A stored (uncompressed) zip written byte by byte, so a test can give an entry any name
/// and any declared size, as a hostile archive would.
pub fn raw_zip(entries: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data, declared) in entries {
        let offset = out.len() as u32;
        let crc = crc32(data);
        let mut h = Vec::new();
        h.extend(0x04034b50u32.to_le_bytes());
        h.extend(20u16.to_le_bytes()); // version needed
        h.extend(0u16.to_le_bytes()); // flags
        h.extend(0u16.to_le_bytes()); // stored
        h.extend(0u32.to_le_bytes()); // time, date
        h.extend(crc.to_le_bytes());
        h.extend((data.len() as u32).to_le_bytes());
        h.extend(declared.to_le_bytes());
        h.extend((name.len() as u16).to_le_bytes());
        h.extend(0u16.to_le_bytes());
        h.extend(name.as_bytes());
        out.extend(&h);
        out.extend(*data);
        let mut c = Vec::new();
        c.extend(0x02014b50u32.to_le_bytes());
        c.extend(20u16.to_le_bytes()); // made by
        c.extend(20u16.to_le_bytes());
        c.extend(0u16.to_le_bytes());
        c.extend(0u16.to_le_bytes());
        c.extend(0u32.to_le_bytes());
        c.extend(crc.to_le_bytes());
        c.extend((data.len() as u32).to_le_bytes());
        c.extend(declared.to_le_bytes());
        c.extend((name.len() as u16).to_le_bytes());
        c.extend([0u8; 8]); // extra and comment lengths, disk, internal attrs
        c.extend(0u32.to_le_bytes()); // external attrs
        c.extend(offset.to_le_bytes());
        c.extend(name.as_bytes());
        central.extend(c);
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x06054b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A crx around `zip`: version 2 (key and signature of the given sizes) or 3 (a header
/// with one RSA proof).
pub fn crx(version: u32, zip: &[u8]) -> Vec<u8> {
    let mut out = b"Cr24".to_vec();
    out.extend(version.to_le_bytes());
    if version == 2 {
        out.extend(162u32.to_le_bytes());
        out.extend(128u32.to_le_bytes());
        out.extend(vec![7u8; 162 + 128]);
    } else {
        // CrxFileHeader { sha256_with_rsa: [AsymmetricKeyProof { public_key: 3 bytes }] }
        let header = [0x12u8, 5, 0x0a, 3, 1, 2, 3];
        out.extend((header.len() as u32).to_le_bytes());
        out.extend(header);
    }
    out.extend(zip);
    out
}

pub fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("site-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
