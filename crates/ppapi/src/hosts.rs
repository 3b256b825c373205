//! Which interfaces each pexe2wasm host offers. The hosts themselves are checked against
//! these lists (a test per host fails when a host registers a function the description
//! lacks, with another signature, or misses one of an interface it offers), and the
//! README's table of interfaces per host is generated from them.

/// The command-line Pepper host (`pexe2wasm run`, `pexe2wasm_runner::pepper`).
pub const CLI: &[&str] = &[
    "PPB_Console;1.0",
    "PPB_Core;1.0",
    "PPB_FileIO;1.0",
    "PPB_FileIO;1.1",
    "PPB_FileRef;1.0",
    "PPB_FileRef;1.1",
    "PPB_FileRef;1.2",
    "PPB_FileSystem;1.0",
    "PPB_Graphics2D;1.0",
    "PPB_Graphics2D;1.1",
    "PPB_Graphics2D;1.2",
    "PPB_HostResolver;1.0",
    "PPB_IMEInputEvent;1.0",
    "PPB_ImageData;1.0",
    "PPB_InputEvent;1.0",
    "PPB_Instance;1.0",
    "PPB_KeyboardInputEvent;1.0",
    "PPB_KeyboardInputEvent;1.2",
    "PPB_MessageLoop;1.0",
    "PPB_Messaging;1.0",
    "PPB_Messaging;1.2",
    "PPB_MouseInputEvent;1.0",
    "PPB_MouseInputEvent;1.1",
    "PPB_NetAddress;1.0",
    "PPB_TCPSocket;1.0",
    "PPB_TCPSocket;1.1",
    "PPB_TCPSocket;1.2",
    "PPB_TouchInputEvent;1.0",
    "PPB_TouchInputEvent;1.4",
    "PPB_UDPSocket;1.0",
    "PPB_UDPSocket;1.1",
    "PPB_UDPSocket;1.2",
    "PPB_URLLoader;1.0",
    "PPB_URLRequestInfo;1.0",
    "PPB_URLResponseInfo;1.0",
    "PPB_Var;1.0",
    "PPB_Var;1.1",
    "PPB_Var;1.2",
    "PPB_VarArray;1.0",
    "PPB_VarArrayBuffer;1.0",
    "PPB_VarDictionary;1.0",
    "PPB_View;1.0",
    "PPB_View;1.1",
    "PPB_View;1.2",
    "PPB_WebSocket;1.0",
    "PPB_WheelInputEvent;1.0",
];

/// The browser host (web/src/host, `pexe2wasm web`). Checked against what it registers by
/// crates/cli/tests/it/web.rs.
pub const BROWSER: &[&str] = &[
    "PPB_Console;1.0",
    "PPB_Core;1.0",
    "PPB_FileIO;1.0",
    "PPB_FileIO;1.1",
    "PPB_FileRef;1.0",
    "PPB_FileRef;1.1",
    "PPB_FileRef;1.2",
    "PPB_FileSystem;1.0",
    "PPB_Graphics2D;1.0",
    "PPB_Graphics2D;1.1",
    "PPB_Graphics2D;1.2",
    "PPB_Graphics3D;1.0",
    "PPB_ImageData;1.0",
    "PPB_InputEvent;1.0",
    "PPB_Instance;1.0",
    "PPB_KeyboardInputEvent;1.0",
    "PPB_KeyboardInputEvent;1.2",
    "PPB_MessageLoop;1.0",
    "PPB_Messaging;1.0",
    "PPB_Messaging;1.2",
    "PPB_MouseInputEvent;1.0",
    "PPB_MouseInputEvent;1.1",
    "PPB_OpenGLES2;1.0",
    "PPB_OpenGLES2ChromiumEnableFeature;1.0",
    "PPB_OpenGLES2ChromiumMapSub;1.0",
    "PPB_OpenGLES2DrawBuffers(Dev);1.0",
    "PPB_OpenGLES2FramebufferBlit;1.0",
    "PPB_OpenGLES2FramebufferMultisample;1.0",
    "PPB_OpenGLES2InstancedArrays;1.0",
    "PPB_OpenGLES2Query;1.0",
    "PPB_OpenGLES2VertexArrayObject;1.0",
    "PPB_Var;1.0",
    "PPB_Var;1.1",
    "PPB_Var;1.2",
    "PPB_VarArray;1.0",
    "PPB_VarArrayBuffer;1.0",
    "PPB_VarDictionary;1.0",
    "PPB_View;1.0",
    "PPB_View;1.1",
    "PPB_View;1.2",
    "PPB_WheelInputEvent;1.0",
];

/// Every host with its list, for reports: (short name, what it is, interfaces).
pub const ALL: &[(&str, &str, &[&str])] = &[
    ("cli", "command line (`pexe2wasm run`)", CLI),
    ("browser", "browser (`pexe2wasm web`)", BROWSER),
];

/// Whether the command-line host offers `interface`.
pub fn cli_offers(interface: &str) -> bool {
    CLI.contains(&interface)
}
