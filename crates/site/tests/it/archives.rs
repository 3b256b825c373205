//! Hostile and broken archives: each refused with one error that names the entry.

use pexe2wasm_site::{open_archive, Limits};

use crate::{crx, raw_zip, zip_of};

fn refused(bytes: &[u8], limits: &Limits) -> String {
    match open_archive(bytes, "app.crx", limits) {
        Ok(i) => panic!("accepted: {:?}", i.tree.files.keys().collect::<Vec<_>>()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn entries_that_leave_the_site_are_refused_by_name() {
    let l = Limits::default();
    for (name, why) in [
        ("../evil.js", "'..'"),
        ("a/../../evil.js", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/x.js", "character"),
        ("a\\..\\..\\x.js", "character"),
    ] {
        let e = refused(&raw_zip(&[("ok.html", b"x", 1), (name, b"x", 1)]), &l);
        assert!(
            e.contains(&format!("entry {name:?}")) && e.contains(why),
            "{name}: {e}"
        );
    }
}

#[test]
fn links_and_duplicates_are_refused() {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default();
    w.start_file("index.html", o).unwrap();
    w.write_all(b"x").unwrap();
    w.add_symlink("lib", "/etc", o).unwrap();
    let z = w.finish().unwrap().into_inner();
    let e = refused(&z, &Limits::default());
    assert!(e.contains("entry \"lib\" is a link"), "{e}");

    let e = refused(
        &raw_zip(&[("a.js", b"1", 1), ("a.js", b"2", 1)]),
        &Limits::default(),
    );
    assert!(e.contains("entry \"a.js\" is there twice"), "{e}");
    // The same name but for case: one file would overwrite the other on such a disk.
    let e = refused(
        &raw_zip(&[("App.js", b"1", 1), ("app.JS", b"2", 1)]),
        &Limits::default(),
    );
    assert!(e.contains("\"app.JS\"") && e.contains("App.js"), "{e}");
    // A file that is also a folder.
    let e = refused(
        &raw_zip(&[("lib", b"1", 1), ("lib/a.js", b"2", 1)]),
        &Limits::default(),
    );
    assert!(e.contains("\"lib/a.js\" is there twice"), "{e}");
}

#[test]
fn bombs_are_refused_by_ratio_total_and_declared_size() {
    let zeros = vec![0u8; 8 << 20];
    let z = zip_of(&[("data/big.bin", &zeros)]);
    let l = Limits {
        max_ratio: 100,
        ..Limits::default()
    };
    let e = refused(&z, &l);
    assert!(
        e.contains("entry \"data/big.bin\"") && e.contains("zip bomb") && e.contains("ratio"),
        "{e}"
    );
    // Deflate reaches about 1030:1 at most: a limit above that accepts it.
    let l = Limits {
        max_ratio: 1100,
        ..Limits::default()
    };
    assert!(open_archive(&z, "a.zip", &l).is_ok());

    let half = vec![1u8; 600 << 10];
    let l = Limits {
        max_total: 1 << 20,
        ..Limits::default()
    };
    let e = refused(&zip_of(&[("a.bin", &half), ("b.bin", &half)]), &l);
    assert!(
        e.contains("entry \"b.bin\"") && e.contains("whole archive"),
        "{e}"
    );

    // An entry that says it is small but is not, and one that says it is huge.
    let e = refused(&raw_zip(&[("a.js", b"0123456789", 3)]), &Limits::default());
    assert!(e.contains("entry \"a.js\""), "{e}");
    let e = refused(&raw_zip(&[("a.js", b"0123", u32::MAX)]), &Limits::default());
    assert!(
        e.contains("entry \"a.js\"") && e.contains("zip bomb"),
        "{e}"
    );

    let l = Limits {
        max_entries: 3,
        ..Limits::default()
    };
    let many: Vec<(String, &[u8])> = (0..5).map(|i| (format!("f{i}"), &b"x"[..])).collect();
    let many: Vec<(&str, &[u8])> = many.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    assert!(refused(&zip_of(&many), &l).contains("more than 3 entries"));
}

#[test]
fn truncated_and_foreign_files_get_one_clear_error() {
    let z = zip_of(&[("manifest.json", b"{}"), ("index.html", b"<p>")]);
    for v in [2, 3] {
        let c = crx(v, &z);
        let i = open_archive(&c, "app.crx", &Limits::default()).unwrap();
        let info = i.crx.unwrap();
        assert_eq!((info.version, info.signatures), (v, 1));
        assert_eq!(i.tree.files.len(), 2);
        // Cut inside the header, and inside the zip.
        let e = refused(&c[..10], &Limits::default());
        assert!(e.contains("app.crx: a .crx header that"), "{e}");
        let e = refused(&c[..c.len() - 30], &Limits::default());
        assert!(e.contains("app.crx: not a zip archive"), "{e}");
    }
    let mut bad = crx(3, &z);
    bad[4] = 9;
    assert!(refused(&bad, &Limits::default()).contains("version 9"));
    let mut huge = crx(2, &z);
    huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(refused(&huge, &Limits::default()).contains("past the end of the file"));
    let e = refused(b"<html>not a zip</html>", &Limits::default());
    assert!(e.contains("not a zip archive"), "{e}");
    assert!(refused(b"", &Limits::default()).contains("not a zip archive"));
}
