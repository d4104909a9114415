//! The mouse's own settings pawl writes: the sensor's dpi list (HID++ 0x2201) and what a
//! wanted dpi becomes on it. SmartShift's values are [`pawl_engine::config::SmartShift`].

use std::fmt;

use crate::feature::adjustable_dpi::STEP_MARK;

/// The most items one `getSensorDpiList` reply holds: 15 bytes after the sensor byte of a
/// long report, 7 u16 values.
pub const MAX_DPI_ITEMS: usize = 7;

/// One item of a dpi list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpiItem {
    /// One supported value.
    Value(u16),
    /// Every `step` from `lo` to `hi` (both included when on the grid).
    Range {
        /// Lowest value.
        lo: u16,
        /// Distance between values (at least 1).
        step: u16,
        /// Highest value.
        hi: u16,
    },
}

/// What a sensor supports, as `getSensorDpiList` reports it. Read from one reply: an
/// MX Master's list is three values (`200, 0xE032, 8000`: 200..=8000 in steps of 50);
/// a longer list is read as far as one reply goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DpiList {
    items: [Option<DpiItem>; MAX_DPI_ITEMS],
}

impl DpiList {
    /// Parses the values after the sensor byte: big-endian u16s up to a 0 (or the end);
    /// `0xE000 | step` between two values makes a range from the one before to the one
    /// after (Solaar `produce_dpi_list`). A step with no value before it, a zero step or a
    /// range that does not rise is dropped.
    pub fn parse(bytes: &[u8]) -> DpiList {
        let mut list = DpiList::default();
        let mut n = 0;
        let values: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .take_while(|&v| v != 0)
            .collect();
        let mut i = 0;
        while i < values.len() && n < MAX_DPI_ITEMS {
            let v = values[i];
            if v & STEP_MARK == STEP_MARK {
                let step = v & !STEP_MARK;
                let prev = match n.checked_sub(1).and_then(|p| list.items[p]) {
                    Some(DpiItem::Value(p)) => Some(p),
                    _ => None,
                };
                match (prev, values.get(i + 1)) {
                    (Some(lo), Some(&hi)) if step > 0 && hi > lo && hi & STEP_MARK != STEP_MARK => {
                        list.items[n - 1] = Some(DpiItem::Range { lo, step, hi });
                        i += 2;
                    }
                    _ => i += 1,
                }
            } else {
                list.items[n] = Some(DpiItem::Value(v));
                n += 1;
                i += 1;
            }
        }
        list
    }

    /// The items, in the device's order.
    pub fn items(&self) -> impl Iterator<Item = DpiItem> + '_ {
        self.items.iter().flatten().copied()
    }

    /// Whether the list has no item.
    pub fn is_empty(&self) -> bool {
        self.items[0].is_none()
    }

    /// Whether the sensor takes `dpi`.
    pub fn contains(&self, dpi: u16) -> bool {
        self.items().any(|item| match item {
            DpiItem::Value(v) => v == dpi,
            DpiItem::Range { lo, step, hi } => {
                (lo..=hi).contains(&dpi) && (dpi - lo).is_multiple_of(step)
            }
        })
    }

    /// The supported value closest to `dpi` (the lower one of two as close), `None` for an
    /// empty list.
    pub fn nearest(&self, dpi: u16) -> Option<u16> {
        let want = i32::from(dpi);
        self.items()
            .map(|item| match item {
                DpiItem::Value(v) => v,
                DpiItem::Range { lo, step, hi } => {
                    let (lo32, step32, hi32) = (i32::from(lo), i32::from(step), i32::from(hi));
                    let last = lo32 + (hi32 - lo32) / step32 * step32;
                    let k = (want.clamp(lo32, last) - lo32 + (step32 - 1) / 2) / step32;
                    (lo32 + k * step32).min(last) as u16
                }
            })
            .min_by_key(|&v| ((i32::from(v) - want).abs(), v))
    }
}

impl fmt::Display for DpiList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match item {
                DpiItem::Value(v) => write!(f, "{v}")?,
                DpiItem::Range { lo, step, hi } => write!(f, "{lo}..={hi} step {step}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(values: &[u16]) -> DpiList {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
        DpiList::parse(&bytes)
    }

    #[test]
    fn a_step_between_two_values_is_a_range() {
        let l = list(&[200, 0xE032, 8000, 0]);
        assert!(l.contains(200) && l.contains(1650) && l.contains(8000));
        assert!(!l.contains(1620) && !l.contains(150) && !l.contains(8050));
        assert_eq!(l.nearest(1620), Some(1600));
        assert_eq!(l.nearest(1625), Some(1600), "a tie goes to the lower value");
        assert_eq!(l.nearest(9000), Some(8000));
        assert_eq!(l.nearest(50), Some(200));
    }

    #[test]
    fn plain_values_stop_at_the_terminator() {
        let l = list(&[400, 800, 1600, 0, 3200]);
        assert_eq!(l.to_string(), "400, 800, 1600");
        assert_eq!(l.nearest(1100), Some(800));
        assert!(!l.contains(3200));
        assert!(list(&[]).is_empty());
        assert_eq!(
            list(&[0xE032, 400]).to_string(),
            "400",
            "a step with nothing before"
        );
    }
}
