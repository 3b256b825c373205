//! The OpenAPI 3 description served at `/openapi.json`. tests/api.rs checks it parses as
//! OpenAPI 3 and that every route and status the server answers is described.

use serde_json::{json, Value};

fn problem(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } }
    })
}

fn upload_body() -> Value {
    json!({
        "required": true,
        "description": "The pexe: the raw bytes, or a multipart form whose file field (named `file`) holds it.",
        "content": {
            "application/octet-stream": { "schema": { "type": "string", "format": "binary" } },
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": { "file": { "type": "string", "format": "binary" } }
                }
            }
        }
    })
}

fn header(description: &str) -> Value {
    json!({ "description": description, "schema": { "type": "string" } })
}

fn upload_errors() -> Vec<(&'static str, Value)> {
    vec![
        (
            "400",
            problem("Not a valid pexe (class `input`; or a bad query or multipart body); `position` tells where in the pexe."),
        ),
        ("408", problem("The request body did not arrive within the body time limit.")),
        ("413", problem("The request body exceeds the size limit.")),
        ("415", problem("The Content-Type is neither application/octet-stream nor multipart/form-data.")),
        ("422", problem("The pexe is valid but uses something the converter does not support (class `unsupported`).")),
        ("500", problem("Internal converter error (class `internal` for a conversion).")),
        ("503", problem("The work queue is full; retry after the Retry-After seconds.")),
        ("504", problem("The job exceeded its time limit.")),
    ]
}

/// The document.
pub fn document() -> Value {
    let mut convert_responses = serde_json::Map::new();
    convert_responses.insert(
        "200".into(),
        json!({
            "description": "The converted module.",
            "headers": {
                "X-Pexe-SHA256": header("SHA-256 of the pexe, hex."),
                "X-Conversion-Time-Ms": header("How long the conversion took, in milliseconds (of the original conversion on a cache hit)."),
                "Server-Timing": header("The same time as `convert;dur=MS`."),
                "X-Wasm-Features": header("wasm features the module uses beyond MVP, comma-separated (e.g. simd, threads, exceptions)."),
                "X-Wasm-Imports": header("The module's imports as module/name, comma-separated."),
                "X-Wasm-Import-Modules": header("The host interfaces (import modules) the module needs, comma-separated."),
                "X-Cache": { "description": "hit or miss in the result cache.", "schema": { "type": "string", "enum": ["hit", "miss"] } }
            },
            "content": {
                "application/wasm": { "schema": { "type": "string", "format": "binary" } },
                "text/plain": { "schema": { "type": "string" } }
            }
        }),
    );
    let mut inspect_responses = serde_json::Map::new();
    inspect_responses.insert(
        "200".into(),
        json!({
            "description": "Facts about the pexe: the same JSON as `pexe2wasm info --json`.",
            "headers": { "X-Pexe-SHA256": header("SHA-256 of the pexe, hex.") },
            "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Info" } } }
        }),
    );
    for (code, v) in upload_errors() {
        if code != "422" {
            inspect_responses.insert(code.into(), v.clone());
        }
        convert_responses.insert(code.into(), v);
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "pexe2wasm-server",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Converts PNaCl executables (.pexe) to WebAssembly and reports facts about them."
        },
        "paths": {
            "/v1/convert": {
                "post": {
                    "operationId": "convert",
                    "summary": "Convert a pexe to a wasm module (or its text).",
                    "parameters": [
                        {
                            "name": "format", "in": "query", "required": false,
                            "description": "wasm (binary, the default) or wat (text).",
                            "schema": { "type": "string", "enum": ["wasm", "wat"], "default": "wasm" }
                        },
                        {
                            "name": "threads", "in": "query", "required": false,
                            "description": "wasm threads (shared memory, atomics, wasi-threads): auto (when the pexe queries nacl-irt-thread-0.1), on or off; true/1 and false/0 mean on and off.",
                            "schema": { "type": "string", "enum": ["auto", "on", "off", "true", "false", "1", "0"], "default": "auto" }
                        }
                    ],
                    "requestBody": upload_body(),
                    "responses": convert_responses
                }
            },
            "/v1/inspect": {
                "post": {
                    "operationId": "inspect",
                    "summary": "Facts about a pexe (sizes, counts, intrinsics, interfaces).",
                    "requestBody": upload_body(),
                    "responses": inspect_responses
                }
            },
            "/healthz": {
                "get": {
                    "operationId": "healthz",
                    "summary": "Liveness: answers while the server runs, even when every worker is busy.",
                    "responses": {
                        "200": {
                            "description": "The server is up.",
                            "content": { "application/json": { "schema": {
                                "type": "object",
                                "required": ["status"],
                                "properties": {
                                    "status": { "type": "string", "enum": ["ok"] },
                                    "conversions_in_flight": { "type": "integer" }
                                }
                            } } }
                        }
                    }
                }
            },
            "/metrics": {
                "get": {
                    "operationId": "metrics",
                    "summary": "Prometheus metrics (text exposition format).",
                    "responses": {
                        "200": { "description": "The metrics.", "content": { "text/plain": { "schema": { "type": "string" } } } }
                    }
                }
            },
            "/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document.",
                    "responses": {
                        "200": { "description": "OpenAPI 3 description of the API.", "content": { "application/json": { "schema": { "type": "object" } } } }
                    }
                }
            },
            "/": {
                "get": {
                    "operationId": "page",
                    "summary": "The upload page: drop a pexe, see its facts, download the wasm.",
                    "responses": {
                        "200": { "description": "An HTML page.", "content": { "text/html": { "schema": { "type": "string" } } } }
                    }
                }
            }
        },
        "components": {
            "schemas": {
                "Problem": {
                    "type": "object",
                    "description": "RFC 9457 problem details.",
                    "required": ["type", "title", "status", "detail"],
                    "properties": {
                        "type": { "type": "string", "description": "urn:pexe2wasm:problem:<kind>" },
                        "title": { "type": "string" },
                        "status": { "type": "integer" },
                        "detail": { "type": "string" },
                        "class": {
                            "type": "string",
                            "enum": ["input", "unsupported", "internal"],
                            "description": "Conversion errors only: whose problem it is (a bad pexe, a valid one using something the converter does not handle, a converter bug). The status and type follow from it; `pexe2wasm batch` reports the same class as the error kind."
                        },
                        "position": { "$ref": "#/components/schemas/Position" }
                    }
                },
                "Position": {
                    "type": "object",
                    "description": "Where in the pexe the error is (the same JSON as in `pexe2wasm batch`'s report.json). Every member is present; null when unknown.",
                    "required": ["bit", "byte", "block", "block_name", "record", "record_index"],
                    "properties": {
                        "bit": { "type": "integer", "description": "Bit offset from the start of the file." },
                        "byte": { "type": "integer", "description": "bit / 8." },
                        "block": { "type": "integer", "nullable": true, "description": "Id of the innermost open block." },
                        "block_name": { "type": "string", "nullable": true, "description": "Its name (function, globals, ...)." },
                        "record": { "type": "integer", "nullable": true, "description": "Code of the record being read." },
                        "record_index": { "type": "integer", "nullable": true, "description": "Index of that record in its block (0-based)." }
                    }
                },
                "Info": {
                    "type": "object",
                    "description": "What `pexe2wasm info --json` prints.",
                    "required": ["file_size", "module_version", "num_types", "num_functions", "num_defined_functions",
                                 "num_declared_functions", "num_globals", "global_data_bytes", "num_basic_blocks",
                                 "num_instructions", "functions", "intrinsics", "irt_interfaces", "ppapi_interfaces",
                                 "symbols", "has_start"],
                    "properties": {
                        "file_size": { "type": "integer" },
                        "pnacl_version": { "type": "integer", "nullable": true },
                        "module_version": { "type": "integer" },
                        "num_types": { "type": "integer" },
                        "num_functions": { "type": "integer" },
                        "num_defined_functions": { "type": "integer" },
                        "num_declared_functions": { "type": "integer" },
                        "num_globals": { "type": "integer" },
                        "global_data_bytes": { "type": "integer" },
                        "num_basic_blocks": { "type": "integer" },
                        "num_instructions": { "type": "integer" },
                        "functions": { "type": "array", "items": { "type": "object", "properties": {
                            "index": { "type": "integer" },
                            "name": { "type": "string", "nullable": true },
                            "defined": { "type": "boolean" },
                            "signature": { "type": "string" }
                        } } },
                        "intrinsics": { "type": "array", "items": { "type": "object", "properties": {
                            "name": { "type": "string" },
                            "allowed": { "type": "boolean" }
                        } } },
                        "irt_interfaces": { "type": "array", "items": { "type": "string" } },
                        "ppapi_interfaces": { "type": "array", "items": { "type": "string" } },
                        "symbols": { "type": "object" },
                        "has_start": { "type": "boolean" }
                    }
                }
            }
        }
    })
}
