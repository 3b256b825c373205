//! Why a file cannot be read as a nexe at all (a nexe NaCl would refuse is not an error:
//! it reads fine and its [`crate::Translation`] says `Refused`).

/// The file is not a NaCl executable, or its ELF structure is broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NexeError {
    #[error("not an ELF file")]
    NotElf,
    #[error("ELF file is {what}; NaCl executables are little-endian 32- or 64-bit")]
    UnsupportedElf { what: &'static str },
    #[error("ELF file for machine {machine} (e_machine); NaCl executables are x86-32, x86-64, ARM or MIPS")]
    Machine { machine: u16 },
    #[error("ELF {what} (e_type {e_type}), not an executable")]
    NotExecutable { e_type: u16, what: &'static str },
    #[error("an ELF executable without NaCl's marks (OS/ABI {os_abi}, no NaCl note or comment, text not at 0x20000): not a nexe")]
    NotNacl { os_abi: u8 },
    #[error("broken ELF structure: {what}")]
    Malformed { what: String },
}

impl NexeError {
    pub(crate) fn malformed(what: impl Into<String>) -> NexeError {
        NexeError::Malformed { what: what.into() }
    }
}
