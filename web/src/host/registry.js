// The PPB functions this host offers. Each function's wasm signature comes from the
// interface description (crates/ppapi/interfaces.pepper, through the generated
// contract.js): registering a function the description's interface lacks, or an
// implementation whose arity differs from the signature, throws. A test lists what is
// registered and checks it against the description, as crates/runner's pepper_host test
// does for the command-line host. Signatures are written `params->results` with i = i32,
// I = i64, f = f32, d = f64.

import { SIGNATURES } from "./contract.js";

export class Registry {
  constructor() {
    this.fns = new Map(); // "PPB_X;1.0" -> Map(name -> {sig, impl})
  }

  /** Registers `impl` as `iface`.`name`; its arity must match the described signature. */
  def(iface, name, impl) {
    const sig = SIGNATURES[iface]?.[name];
    if (sig === undefined) {
      throw new Error(`${iface}.${name}: not a function of an interface this host offers (crates/ppapi: interfaces.pepper, hosts.rs)`);
    }
    const params = sig.split("->")[0].length;
    if (impl.length !== params) {
      throw new Error(`${iface}.${name}: ${impl.length} parameters for signature ${sig}`);
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
