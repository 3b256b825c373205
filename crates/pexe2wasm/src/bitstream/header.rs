//! The PNaCl file header that replaces LLVM's wrapper: `PEXE`, a field count, a byte count
//! and tagged fields (the PNaCl version among them).

use super::error::{BitstreamError, BitstreamErrorKind as K, Position};

pub const MAGIC: &[u8; 4] = b"PEXE";
/// Field tag of the PNaCl bitcode version.
pub const FIELD_PNACL_VERSION: u8 = 1;
/// Field tag of the "align bitcode records" flag (never seen in shipped pexes).
pub const FIELD_ALIGN_BITCODE_RECORDS: u8 = 2;
/// The only PNaCl bitcode version that was ever shipped as stable.
pub const SUPPORTED_VERSION: u32 = 2;

/// One tagged header field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderField {
    /// Field tag (4 bits).
    pub id: u8,
    /// Field type: 0 buffer, 1 u32, 2 flag, 3 unknown (4 bits).
    pub ftype: u8,
    pub data: Vec<u8>,
}

/// The parsed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub fields: Vec<HeaderField>,
    /// Size of the header in bytes; the bitstream starts here.
    pub size: usize,
}

impl Header {
    /// The standard header every shipped pexe carries: one field, PNaCl version 2.
    pub fn standard() -> Self {
        Header {
            fields: vec![HeaderField {
                id: FIELD_PNACL_VERSION,
                ftype: 1,
                data: SUPPORTED_VERSION.to_le_bytes().to_vec(),
            }],
            size: 16,
        }
    }

    /// The PNaCl version field, if present and well formed.
    pub fn pnacl_version(&self) -> Option<u32> {
        self.fields
            .iter()
            .find(|f| f.id == FIELD_PNACL_VERSION && f.data.len() == 4)
            .map(|f| u32::from_le_bytes(f.data[..4].try_into().unwrap()))
    }

    /// Parses and checks the header: magic, field layout, and PNaCl version 2.
    pub fn parse(data: &[u8]) -> Result<Header, BitstreamError> {
        let err = |bit: u64, m: String| BitstreamError::new(K::Writer(m), Position::at_bit(bit));
        if data.len() < 4 {
            return Err(BitstreamError::new(
                K::UnexpectedEof {
                    needed: (4 - data.len() as u64) * 8,
                },
                Position::at_bit(data.len() as u64 * 8),
            ));
        }
        if &data[..4] != MAGIC {
            if data.starts_with(b"BC\xc0\xde") {
                return Err(err(
                    0,
                    "this is raw LLVM bitcode (magic 'BC' 0xC0DE), not a finalized pexe; \
                     run pnacl-finalize on it first"
                        .into(),
                ));
            }
            return Err(err(
                0,
                format!(
                    "not a pexe: the file starts with {:02x} {:02x} {:02x} {:02x}, not 'PEXE'",
                    data[0], data[1], data[2], data[3]
                ),
            ));
        }
        let u16_at = |off: usize| -> Result<u16, BitstreamError> {
            data.get(off..off + 2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .ok_or_else(|| {
                    BitstreamError::new(
                        K::UnexpectedEof { needed: 16 },
                        Position::at_bit(data.len() as u64 * 8),
                    )
                })
        };
        let num_fields = u16_at(4)? as usize;
        let num_bytes = u16_at(6)? as usize;
        let end = 8 + num_bytes;
        if end > data.len() {
            return Err(err(
                48,
                format!("header claims {num_bytes} bytes of fields but the file is shorter"),
            ));
        }
        let mut fields = Vec::new();
        let mut off = 8;
        for i in 0..num_fields {
            if off + 4 > end {
                return Err(err(
                    off as u64 * 8,
                    format!("header field {i} runs past the header's {num_bytes} bytes"),
                ));
            }
            let tag = u16_at(off)?;
            let len = u16_at(off + 2)? as usize;
            let padded = (len + 3) & !3;
            if off + 4 + padded > end {
                return Err(err(
                    off as u64 * 8,
                    format!("header field {i} ({len} bytes) runs past the header"),
                ));
            }
            fields.push(HeaderField {
                id: (tag >> 4) as u8,
                ftype: (tag & 0xf) as u8,
                data: data[off + 4..off + 4 + len].to_vec(),
            });
            off += 4 + padded;
        }
        if off != end {
            return Err(err(
                off as u64 * 8,
                format!(
                    "header fields take {} bytes but the header declares {num_bytes}",
                    off - 8
                ),
            ));
        }
        let h = Header { fields, size: end };
        match h.pnacl_version() {
            Some(SUPPORTED_VERSION) => Ok(h),
            Some(v) => Err(err(
                64,
                format!("unsupported PNaCl bitcode version {v} (only version {SUPPORTED_VERSION} is supported)"),
            )),
            None => Err(err(64, "header has no PNaCl version field".into())),
        }
    }

    /// Serializes the header (fields padded to 4 bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for f in &self.fields {
            let tag = ((f.id as u16) << 4) | (f.ftype as u16 & 0xf);
            body.extend_from_slice(&tag.to_le_bytes());
            body.extend_from_slice(&(f.data.len() as u16).to_le_bytes());
            body.extend_from_slice(&f.data);
            while body.len() % 4 != 0 {
                body.push(0);
            }
        }
        let mut out = Vec::with_capacity(8 + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.fields.len() as u16).to_le_bytes());
        out.extend_from_slice(&(body.len() as u16).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_header_bytes() {
        let b = Header::standard().to_bytes();
        assert_eq!(
            b,
            [0x50, 0x45, 0x58, 0x45, 1, 0, 8, 0, 0x11, 0, 4, 0, 2, 0, 0, 0]
        );
        let h = Header::parse(&b).unwrap();
        assert_eq!(h, Header::standard());
    }

    #[test]
    fn rejects_bad_magic_and_versions() {
        assert!(Header::parse(b"ELF\x7f....")
            .unwrap_err()
            .to_string()
            .contains("not a pexe"));
        let mut b = Header::standard().to_bytes();
        b[12] = 1;
        let e = Header::parse(&b).unwrap_err().to_string();
        assert!(e.contains("unsupported PNaCl bitcode version 1"), "{e}");
        assert!(Header::parse(&b[..10]).is_err());
    }
}
