// The PPB functions this host offers. Each function's wasm signature comes from the
// interface description (crates/ppapi/interfaces.pepper, through the generated
// contract.js): registering a function the description's interface lacks, or an
// implementation whose arity differs from the signature, throws. A test lists what is
// registered and checks it against the description, as crates/runner's pepper_host test
// does for the command-line host. Signatures are written `params->results` with i = i32,
// I = i64, f = f32, d = f64.
//
// The registry also holds each family's release hooks: what a resource of a kind held
// beyond its state words (module memory, a worker's records, a WebGL context) is let go
// by the family that made it when the resource's last reference goes
// (`Context.releaseResource`).

import { SIGNATURES } from "./contract.js";

/**
 * What a family does when the last reference to one of its resources goes: `res` is the
 * id, already free for reuse; `fields` a copy of its state words at release.
 * @typedef {(res: number, fields: Int32Array) => void} ReleaseHook
 */

export class Registry {
  constructor() {
    this.fns = new Map(); // "PPB_X;1.0" -> Map(name -> {sig, impl})
    /** @type {Map<number, ReleaseHook>} resource kind -> the hook of the family that owns it */
    this.releaseHooks = new Map();
  }

  /**
   * Registers `impl` as `iface`.`name`; its arity must match the described signature.
   * `arity` is `impl.length` unless `impl` wraps a function whose arity is the one to
   * check (a wrapper taking `...args` has length 0 whatever it forwards).
   * @param {string} iface
   * @param {string} name
   * @param {(...args: any[]) => any} impl
   * @param {number} [arity]
   */
  def(iface, name, impl, arity = impl.length) {
    const sig = SIGNATURES[iface]?.[name];
    if (sig === undefined) {
      throw new Error(`${iface}.${name}: not a function of an interface this host offers (crates/ppapi: interfaces.pepper, hosts.rs)`);
    }
    const params = sig.split("->")[0].length;
    if (arity !== params) {
      throw new Error(`${iface}.${name}: ${arity} parameters for signature ${sig}`);
    }
    let m = this.fns.get(iface);
    if (!m) this.fns.set(iface, (m = new Map()));
    if (m.has(name)) throw new Error(`${iface}.${name} registered twice`);
    m.set(name, { sig, impl });
  }

  /** Registers the same function under several versions of an interface. */
  defAll(ifaces, name, impl) {
    for (const i of ifaces) this.def(i, name, impl);
  }

  /**
   * Makes `hook` what a release of the last reference to a resource of `kind` runs. One
   * family owns a kind: a second hook for it throws.
   * @param {number} kind a KIND (resources.js)
   * @param {ReleaseHook} hook
   */
  onRelease(kind, hook) {
    if (this.releaseHooks.has(kind)) throw new Error(`resource kind ${kind} has a release hook already`);
    this.releaseHooks.set(kind, hook);
  }

  /**
   * The last reference to `res`, of `kind`, is gone: its family's hook frees what it
   * held. A kind whose state is all in its words has no hook.
   * @param {number} res
   * @param {number} kind
   * @param {Int32Array} fields
   */
  released(res, kind, fields) {
    this.releaseHooks.get(kind)?.(res, fields);
  }

  offers(iface) {
    return this.fns.has(iface);
  }

  get(iface, name) {
    return this.fns.get(iface)?.get(name);
  }

  /** [{interface, function, sig}] for the description check. */
  list() {
    const out = [];
    for (const [iface, m] of this.fns) {
      for (const [name, { sig }] of m) out.push({ interface: iface, function: name, sig });
    }
    return out;
  }
}
