//! Markdown tables for the docs.

use crate::model::Description;

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
}
