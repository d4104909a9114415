//! A minimal writer of "newc" cpio archives, the format the kernel unpacks as an initramfs
//! (`Documentation/driver-api/early-userspace/buffer-format.rst`).

/// An archive being built in memory. Entries get increasing inode numbers and mtime 0, so
/// the same inputs give the same bytes.
#[derive(Debug, Default)]
pub struct Cpio {
    out: Vec<u8>,
    ino: u32,
}

impl Cpio {
    /// A directory (`mode` permission bits, e.g. `0o755`).
    pub fn dir(&mut self, name: &str, mode: u32) {
        self.entry(name, 0o040_000 | mode, 2, &[]);
    }

    /// A regular file.
    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) {
        self.entry(name, 0o100_000 | mode, 1, data);
    }

    /// A symbolic link to `target`.
    pub fn symlink(&mut self, name: &str, target: &str) {
        self.entry(name, 0o120_777, 1, target.as_bytes());
    }

    /// Appends the trailer and returns the archive.
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, 1, &[]);
        self.out
    }

    fn entry(&mut self, name: &str, mode: u32, nlink: u32, data: &[u8]) {
        let name = name.trim_start_matches('/');
        self.ino += 1;
        let fields = [
            self.ino,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime
            data.len() as u32,
            0, // devmajor
            0, // devminor
            0, // rdevmajor
            0, // rdevminor
            name.len() as u32 + 1,
            0, // check
        ];
        self.out.extend_from_slice(b"070701");
        for f in fields {
            self.out.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(0);
        self.pad();
        self.out.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_entries_are_aligned_and_end_with_the_trailer() {
        let mut c = Cpio::default();
        c.dir("bin", 0o755);
        c.file("/init", 0o755, b"#!/bin/sh\n");
        let out = c.finish();
        assert_eq!(out.len() % 4, 0);
        // First header: magic, inode 1, directory mode 040755.
        assert_eq!(&out[..22], b"07070100000001000041ed");
        // The name follows the 110-byte header; header + "bin\0" = 114, padded to 116.
        assert_eq!(&out[110..114], b"bin\0");
        assert_eq!(&out[116..122], b"070701");
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("init\0"));
        assert!(text.contains("#!/bin/sh\n"));
        assert!(text.contains("TRAILER!!!\0"));
    }
}
