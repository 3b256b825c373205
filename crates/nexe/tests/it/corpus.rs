use pexe2wasm_testkit::corpus::{real_nexe, NEXES};

#[test]
fn explore() {
    for name in NEXES {
        let Some(bytes) = real_nexe(name) else { return };
        let nexe = pexe2wasm_nexe::inspect(&bytes).unwrap();
        println!("== {name}: {}", nexe.info.summary());
        println!(
            "   recognized {:?} layout {:?} abi {:?} irt {:?}",
            nexe.info.recognized_by,
            nexe.info.layout,
            nexe.info.runtime_abi,
            nexe.info.irt_interfaces.len()
        );
        if let Some(v) = nexe.validate_x86_64() {
            println!("   valid {} errors {} warnings {} instrs {} calls {} jumps {} outside {:?} icalls {} ijumps {}", v.is_valid(), v.error_count, v.warning_count, v.facts.instructions, v.facts.call_targets.len(), v.facts.jump_targets.len(), v.facts.outside_targets.len(), v.facts.indirect_calls, v.facts.indirect_jumps);
            for e in v.errors.iter().take(8) {
                println!("     E {e}");
            }
            for w in v.warnings.iter().take(3) {
                println!("     W {w}");
            }
        }
    }
}
