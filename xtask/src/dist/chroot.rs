//! chroot
pub fn test(_r: &std::path::Path, _d: &std::path::Path) -> anyhow::Result<()> {
    Ok(())
}
