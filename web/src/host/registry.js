// The PPB functions this host offers, each with its wasm signature as the interface
// description has it (crates/ppapi, `ppapi-json`): a test lists them and checks them
// against the description, as crates/runner's pepper_host test does for the command-line
// host. Signatures are written `params->results` with i = i32, I = i64, f = f32, d = f64.

export class Registry {
  constructor() {
    this.fns = new Map(); // "PPB_X;1.0" -> Map(name -> {sig, impl})
  }

  /** Registers `impl` as `iface`.`name`; its arity must match the signature. */
  def(iface, name, sig, impl) {
    const params = sig.split("->")[0].length;
    if (impl.length !== params) {
      throw new Error(`${iface}.${name}: ${impl.length} parameters for signature ${sig}`);
    }
    let m = this.fns.get(iface);
    if (!m) this.fns.set(iface, (m = new Map()));
    if (m.has(name)) throw new Error(`${iface}.${name} registered twice`);
    m.set(name, { sig, impl });
  }

  /** Registers the same functions under several versions of an interface. */
  defAll(ifaces, name, sig, impl) {
    for (const i of ifaces) this.def(i, name, sig, impl);
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
