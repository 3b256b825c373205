//! Markdown tables for the docs.

use crate::model::{Description, Kind};

impl Description {
    /// A Markdown table of every interface version: name string, kind, whether it is a
    /// `(Dev)` or dev-channel interface, number of functions.
    pub fn markdown_table(&self) -> String {
        let mut s = String::from("| interface | kind | dev | functions |\n|---|---|---|---:|\n");
        for i in &self.interfaces {
            s.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                i.name,
                i.kind,
                match (i.dev, i.dev_channel) {
                    (true, _) => "(Dev)",
                    (false, true) => "channel",
                    (false, false) => "",
                },
                i.functions.len()
            ));
        }
        s
    }

    /// A Markdown table of the PPB interfaces (what a host implements), one row per
    /// interface with the versions described and the versions each pexe2wasm host offers
    /// ([`crate::hosts::ALL`]), `-` for none.
    pub fn hosts_table(&self) -> String {
        let mut s = String::from("| interface | versions described |");
        let mut rule = String::from("|---|---|");
        for (_, what, _) in crate::hosts::ALL {
            s.push_str(&format!(" {what} |"));
            rule.push_str("---|");
        }
        s.push('\n');
        s.push_str(&rule);
        s.push('\n');
        let mut bases: Vec<&str> = Vec::new();
        for i in &self.interfaces {
            if i.kind == Kind::Ppb && !bases.contains(&i.base.as_str()) {
                bases.push(&i.base);
            }
        }
        for base in bases {
            let versions: Vec<&str> = self.versions(base).map(|i| i.version.as_str()).collect();
            s.push_str(&format!("| `{base}` | {} |", versions.join(", ")));
            for (_, _, offered) in crate::hosts::ALL {
                let have: Vec<&str> = self
                    .versions(base)
                    .filter(|i| offered.contains(&i.name.as_str()))
                    .map(|i| i.version.as_str())
                    .collect();
                if have.is_empty() {
                    s.push_str(" - |");
                } else {
                    s.push_str(&format!(" {} |", have.join(", ")));
                }
            }
            s.push('\n');
        }
        s
    }
}
