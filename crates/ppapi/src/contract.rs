//! Generated from crates/ppapi/interfaces.pepper by
//! `cargo run -p pexe2wasm-ppapi --bin ppapi-json -- --write-contract`: do not edit.
//! A test (tests/it/contract.rs) fails when it is not current.
//!
//! The named values of the description's enums, one module per enum, each value
//! under its short name (the C name without the enum's `strip` prefix).

/// `PP_Bool`.
pub mod pp_bool {
    /// `PP_FALSE`
    pub const FALSE: i32 = 0;
    /// `PP_TRUE`
    pub const TRUE: i32 = 1;
}

/// `PP_VarType`.
pub mod pp_vartype {
    /// `PP_VARTYPE_UNDEFINED`
    pub const UNDEFINED: i32 = 0;
    /// `PP_VARTYPE_NULL`
    pub const NULL: i32 = 1;
    /// `PP_VARTYPE_BOOL`
    pub const BOOL: i32 = 2;
    /// `PP_VARTYPE_INT32`
    pub const INT32: i32 = 3;
    /// `PP_VARTYPE_DOUBLE`
    pub const DOUBLE: i32 = 4;
    /// `PP_VARTYPE_STRING`
    pub const STRING: i32 = 5;
    /// `PP_VARTYPE_OBJECT`
    pub const OBJECT: i32 = 6;
    /// `PP_VARTYPE_ARRAY`
    pub const ARRAY: i32 = 7;
    /// `PP_VARTYPE_DICTIONARY`
    pub const DICTIONARY: i32 = 8;
    /// `PP_VARTYPE_ARRAY_BUFFER`
    pub const ARRAY_BUFFER: i32 = 9;
    /// `PP_VARTYPE_RESOURCE`
    pub const RESOURCE: i32 = 10;
}

/// `PP_Error`.
pub mod pp_error {
    /// `PP_OK`
    pub const OK: i32 = 0;
    /// `PP_OK_COMPLETIONPENDING`
    pub const COMPLETIONPENDING: i32 = -1;
    /// `PP_ERROR_FAILED`
    pub const FAILED: i32 = -2;
    /// `PP_ERROR_ABORTED`
    pub const ABORTED: i32 = -3;
    /// `PP_ERROR_BADARGUMENT`
    pub const BADARGUMENT: i32 = -4;
    /// `PP_ERROR_BADRESOURCE`
    pub const BADRESOURCE: i32 = -5;
    /// `PP_ERROR_NOINTERFACE`
    pub const NOINTERFACE: i32 = -6;
    /// `PP_ERROR_NOACCESS`
    pub const NOACCESS: i32 = -7;
    /// `PP_ERROR_NOMEMORY`
    pub const NOMEMORY: i32 = -8;
    /// `PP_ERROR_NOSPACE`
    pub const NOSPACE: i32 = -9;
    /// `PP_ERROR_NOQUOTA`
    pub const NOQUOTA: i32 = -10;
    /// `PP_ERROR_INPROGRESS`
    pub const INPROGRESS: i32 = -11;
    /// `PP_ERROR_NOTSUPPORTED`
    pub const NOTSUPPORTED: i32 = -12;
    /// `PP_ERROR_BLOCKS_MAIN_THREAD`
    pub const BLOCKS_MAIN_THREAD: i32 = -13;
    /// `PP_ERROR_MALFORMED_INPUT`
    pub const MALFORMED_INPUT: i32 = -14;
    /// `PP_ERROR_RESOURCE_FAILED`
    pub const RESOURCE_FAILED: i32 = -15;
    /// `PP_ERROR_FILENOTFOUND`
    pub const FILENOTFOUND: i32 = -20;
    /// `PP_ERROR_FILEEXISTS`
    pub const FILEEXISTS: i32 = -21;
    /// `PP_ERROR_FILETOOBIG`
    pub const FILETOOBIG: i32 = -22;
    /// `PP_ERROR_FILECHANGED`
    pub const FILECHANGED: i32 = -23;
    /// `PP_ERROR_NOTAFILE`
    pub const NOTAFILE: i32 = -24;
    /// `PP_ERROR_TIMEDOUT`
    pub const TIMEDOUT: i32 = -30;
    /// `PP_ERROR_USERCANCEL`
    pub const USERCANCEL: i32 = -40;
    /// `PP_ERROR_NO_USER_GESTURE`
    pub const NO_USER_GESTURE: i32 = -41;
    /// `PP_ERROR_CONTEXT_LOST`
    pub const CONTEXT_LOST: i32 = -50;
    /// `PP_ERROR_NO_MESSAGE_LOOP`
    pub const NO_MESSAGE_LOOP: i32 = -51;
    /// `PP_ERROR_WRONG_THREAD`
    pub const WRONG_THREAD: i32 = -52;
    /// `PP_ERROR_WOULD_BLOCK_THREAD`
    pub const WOULD_BLOCK_THREAD: i32 = -53;
    /// `PP_ERROR_CONNECTION_CLOSED`
    pub const CONNECTION_CLOSED: i32 = -100;
    /// `PP_ERROR_CONNECTION_RESET`
    pub const CONNECTION_RESET: i32 = -101;
    /// `PP_ERROR_CONNECTION_REFUSED`
    pub const CONNECTION_REFUSED: i32 = -102;
    /// `PP_ERROR_CONNECTION_ABORTED`
    pub const CONNECTION_ABORTED: i32 = -103;
    /// `PP_ERROR_CONNECTION_FAILED`
    pub const CONNECTION_FAILED: i32 = -104;
    /// `PP_ERROR_CONNECTION_TIMEDOUT`
    pub const CONNECTION_TIMEDOUT: i32 = -105;
    /// `PP_ERROR_ADDRESS_INVALID`
    pub const ADDRESS_INVALID: i32 = -106;
    /// `PP_ERROR_ADDRESS_UNREACHABLE`
    pub const ADDRESS_UNREACHABLE: i32 = -107;
    /// `PP_ERROR_ADDRESS_IN_USE`
    pub const ADDRESS_IN_USE: i32 = -108;
    /// `PP_ERROR_MESSAGE_TOO_BIG`
    pub const MESSAGE_TOO_BIG: i32 = -109;
    /// `PP_ERROR_NAME_NOT_RESOLVED`
    pub const NAME_NOT_RESOLVED: i32 = -110;
}

/// `PP_CompletionCallback_Flag`.
pub mod pp_completioncallback_flag {
    /// `PP_COMPLETIONCALLBACK_FLAG_NONE`
    pub const NONE: i32 = 0;
    /// `PP_COMPLETIONCALLBACK_FLAG_OPTIONAL`
    pub const OPTIONAL: i32 = 1;
}

/// `PP_LogLevel`.
pub mod pp_loglevel {
    /// `PP_LOGLEVEL_TIP`
    pub const TIP: i32 = 0;
    /// `PP_LOGLEVEL_LOG`
    pub const LOG: i32 = 1;
    /// `PP_LOGLEVEL_WARNING`
    pub const WARNING: i32 = 2;
    /// `PP_LOGLEVEL_ERROR`
    pub const ERROR: i32 = 3;
}

/// `PP_InputEvent_Type`.
pub mod pp_inputevent_type {
    /// `PP_INPUTEVENT_TYPE_UNDEFINED`
    pub const UNDEFINED: i32 = -1;
    /// `PP_INPUTEVENT_TYPE_MOUSEDOWN`
    pub const MOUSEDOWN: i32 = 0;
    /// `PP_INPUTEVENT_TYPE_MOUSEUP`
    pub const MOUSEUP: i32 = 1;
    /// `PP_INPUTEVENT_TYPE_MOUSEMOVE`
    pub const MOUSEMOVE: i32 = 2;
    /// `PP_INPUTEVENT_TYPE_MOUSEENTER`
    pub const MOUSEENTER: i32 = 3;
    /// `PP_INPUTEVENT_TYPE_MOUSELEAVE`
    pub const MOUSELEAVE: i32 = 4;
    /// `PP_INPUTEVENT_TYPE_WHEEL`
    pub const WHEEL: i32 = 5;
    /// `PP_INPUTEVENT_TYPE_RAWKEYDOWN`
    pub const RAWKEYDOWN: i32 = 6;
    /// `PP_INPUTEVENT_TYPE_KEYDOWN`
    pub const KEYDOWN: i32 = 7;
    /// `PP_INPUTEVENT_TYPE_KEYUP`
    pub const KEYUP: i32 = 8;
    /// `PP_INPUTEVENT_TYPE_CHAR`
    pub const CHAR: i32 = 9;
    /// `PP_INPUTEVENT_TYPE_CONTEXTMENU`
    pub const CONTEXTMENU: i32 = 10;
    /// `PP_INPUTEVENT_TYPE_IME_COMPOSITION_START`
    pub const IME_COMPOSITION_START: i32 = 11;
    /// `PP_INPUTEVENT_TYPE_IME_COMPOSITION_UPDATE`
    pub const IME_COMPOSITION_UPDATE: i32 = 12;
    /// `PP_INPUTEVENT_TYPE_IME_COMPOSITION_END`
    pub const IME_COMPOSITION_END: i32 = 13;
    /// `PP_INPUTEVENT_TYPE_IME_TEXT`
    pub const IME_TEXT: i32 = 14;
    /// `PP_INPUTEVENT_TYPE_TOUCHSTART`
    pub const TOUCHSTART: i32 = 15;
    /// `PP_INPUTEVENT_TYPE_TOUCHMOVE`
    pub const TOUCHMOVE: i32 = 16;
    /// `PP_INPUTEVENT_TYPE_TOUCHEND`
    pub const TOUCHEND: i32 = 17;
    /// `PP_INPUTEVENT_TYPE_TOUCHCANCEL`
    pub const TOUCHCANCEL: i32 = 18;
}

/// `PP_InputEvent_Modifier`.
pub mod pp_inputevent_modifier {
    /// `PP_INPUTEVENT_MODIFIER_SHIFTKEY`
    pub const SHIFTKEY: i32 = 1;
    /// `PP_INPUTEVENT_MODIFIER_CONTROLKEY`
    pub const CONTROLKEY: i32 = 2;
    /// `PP_INPUTEVENT_MODIFIER_ALTKEY`
    pub const ALTKEY: i32 = 4;
    /// `PP_INPUTEVENT_MODIFIER_METAKEY`
    pub const METAKEY: i32 = 8;
    /// `PP_INPUTEVENT_MODIFIER_ISKEYPAD`
    pub const ISKEYPAD: i32 = 16;
    /// `PP_INPUTEVENT_MODIFIER_ISAUTOREPEAT`
    pub const ISAUTOREPEAT: i32 = 32;
    /// `PP_INPUTEVENT_MODIFIER_LEFTBUTTONDOWN`
    pub const LEFTBUTTONDOWN: i32 = 64;
    /// `PP_INPUTEVENT_MODIFIER_MIDDLEBUTTONDOWN`
    pub const MIDDLEBUTTONDOWN: i32 = 128;
    /// `PP_INPUTEVENT_MODIFIER_RIGHTBUTTONDOWN`
    pub const RIGHTBUTTONDOWN: i32 = 256;
    /// `PP_INPUTEVENT_MODIFIER_CAPSLOCKKEY`
    pub const CAPSLOCKKEY: i32 = 512;
    /// `PP_INPUTEVENT_MODIFIER_NUMLOCKKEY`
    pub const NUMLOCKKEY: i32 = 1024;
    /// `PP_INPUTEVENT_MODIFIER_ISLEFT`
    pub const ISLEFT: i32 = 2048;
    /// `PP_INPUTEVENT_MODIFIER_ISRIGHT`
    pub const ISRIGHT: i32 = 4096;
    /// `PP_INPUTEVENT_MODIFIER_ISPEN`
    pub const ISPEN: i32 = 8192;
    /// `PP_INPUTEVENT_MODIFIER_ISERASER`
    pub const ISERASER: i32 = 16384;
}

/// `PP_InputEvent_MouseButton`.
pub mod pp_inputevent_mousebutton {
    /// `PP_INPUTEVENT_MOUSEBUTTON_NONE`
    pub const NONE: i32 = -1;
    /// `PP_INPUTEVENT_MOUSEBUTTON_LEFT`
    pub const LEFT: i32 = 0;
    /// `PP_INPUTEVENT_MOUSEBUTTON_MIDDLE`
    pub const MIDDLE: i32 = 1;
    /// `PP_INPUTEVENT_MOUSEBUTTON_RIGHT`
    pub const RIGHT: i32 = 2;
}

/// `PP_InputEvent_Class`.
pub mod pp_inputevent_class {
    /// `PP_INPUTEVENT_CLASS_MOUSE`
    pub const MOUSE: i32 = 1;
    /// `PP_INPUTEVENT_CLASS_KEYBOARD`
    pub const KEYBOARD: i32 = 2;
    /// `PP_INPUTEVENT_CLASS_WHEEL`
    pub const WHEEL: i32 = 4;
    /// `PP_INPUTEVENT_CLASS_TOUCH`
    pub const TOUCH: i32 = 8;
    /// `PP_INPUTEVENT_CLASS_IME`
    pub const IME: i32 = 16;
    /// `PP_INPUTEVENT_CLASS_COALESCED_TOUCH`
    pub const COALESCED_TOUCH: i32 = 32;
}

/// `PP_FileType`.
pub mod pp_filetype {
    /// `PP_FILETYPE_REGULAR`
    pub const REGULAR: i32 = 0;
    /// `PP_FILETYPE_DIRECTORY`
    pub const DIRECTORY: i32 = 1;
    /// `PP_FILETYPE_OTHER`
    pub const OTHER: i32 = 2;
}

/// `PP_FileSystemType`.
pub mod pp_filesystemtype {
    /// `PP_FILESYSTEMTYPE_INVALID`
    pub const INVALID: i32 = 0;
    /// `PP_FILESYSTEMTYPE_EXTERNAL`
    pub const EXTERNAL: i32 = 1;
    /// `PP_FILESYSTEMTYPE_LOCALPERSISTENT`
    pub const LOCALPERSISTENT: i32 = 2;
    /// `PP_FILESYSTEMTYPE_LOCALTEMPORARY`
    pub const LOCALTEMPORARY: i32 = 3;
    /// `PP_FILESYSTEMTYPE_ISOLATED`
    pub const ISOLATED: i32 = 4;
}

/// `PP_FileOpenFlags`.
pub mod pp_fileopenflags {
    /// `PP_FILEOPENFLAG_READ`
    pub const READ: i32 = 1;
    /// `PP_FILEOPENFLAG_WRITE`
    pub const WRITE: i32 = 2;
    /// `PP_FILEOPENFLAG_CREATE`
    pub const CREATE: i32 = 4;
    /// `PP_FILEOPENFLAG_TRUNCATE`
    pub const TRUNCATE: i32 = 8;
    /// `PP_FILEOPENFLAG_EXCLUSIVE`
    pub const EXCLUSIVE: i32 = 16;
    /// `PP_FILEOPENFLAG_APPEND`
    pub const APPEND: i32 = 32;
}

/// `PP_ImageDataFormat`.
pub mod pp_imagedataformat {
    /// `PP_IMAGEDATAFORMAT_BGRA_PREMUL`
    pub const BGRA_PREMUL: i32 = 0;
    /// `PP_IMAGEDATAFORMAT_RGBA_PREMUL`
    pub const RGBA_PREMUL: i32 = 1;
}
