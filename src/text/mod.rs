//! PNaClAsm text: the three-column disassembly (`dis`) and the assembler (`asm`).
