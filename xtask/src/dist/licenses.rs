//! Licence texts for `contrib/debian/copyright`, by DEP-5 short name. Apache-2.0 is in every
//! Debian system's `/usr/share/common-licenses`; the texts with the copyright holders in them
//! (BSD-3-Clause for encoding_rs's WHATWG data, Unicode-3.0 for unicode-ident's tables, the DejaVu fonts' Bitstream Vera and Arev
//! licences) are read from the crate sources cargo downloaded, so they are the ones shipped.

/// Where a licence's text comes from.
pub enum Text {
    /// Written here.
    Inline(&'static str),
    /// A file of a crate's source (crate name, path inside it): from the first line that
    /// starts with `from` (the start when `None`) up to the next line starting with `until`
    /// (the end when `None`).
    CrateFile {
        krate: &'static str,
        path: &'static str,
        from: Option<&'static str>,
        until: Option<&'static str>,
    },
}

/// The text of DEP-5 licence `name`, or `None` when this file does not know it yet.
pub fn text(name: &str) -> Option<Text> {
    Some(match name {
        "MIT" => Text::Inline(MIT),
        "Apache-2.0" => Text::Inline(APACHE),
        "Apache-2.0 with LLVM exception" => Text::Inline(APACHE_LLVM),
        "Zlib" => Text::Inline(ZLIB),
        "HPND-sell-variant" => Text::Inline(HPND_SELL_VARIANT),
        "Unlicense" => Text::Inline(UNLICENSE),
        "0BSD" => Text::Inline(ZERO_BSD),
        "GPL-2.0-only" => Text::Inline(GPL_2),
        "LGPL-2.1-only" => Text::Inline(LGPL_2_1),
        "BSD-2-Clause" => Text::CrateFile {
            krate: "libbpf-rs",
            path: "LICENSE.BSD-2-Clause",
            from: None,
            until: None,
        },
        "BSD-3-Clause" => Text::CrateFile {
            krate: "encoding_rs",
            path: "LICENSE-WHATWG",
            from: None,
            until: None,
        },
        "bitstream-vera" => Text::CrateFile {
            krate: "dejavu",
            path: "assets/dejavu-fonts-ttf-2.37/LICENSE",
            from: Some("Bitstream Vera Fonts Copyright"),
            until: Some("Arev Fonts Copyright"),
        },
        "Unicode-3.0" => Text::CrateFile {
            krate: "unicode-ident",
            path: "LICENSE-UNICODE",
            from: None,
            until: None,
        },
        "Arev-fonts" => Text::CrateFile {
            krate: "dejavu",
            path: "assets/dejavu-fonts-ttf-2.37/LICENSE",
            from: Some("Arev Fonts Copyright"),
            until: Some("TeX Gyre DJV Math"),
        },
        _ => return None,
    })
}

const MIT: &str = "\
Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the \"Software\"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
";

const APACHE: &str = "\
Licensed under the Apache License, Version 2.0 (the \"License\"); you may not
use this file except in compliance with the License. You may obtain a copy of
the License at https://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an \"AS IS\" BASIS, WITHOUT
WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
License for the specific language governing permissions and limitations under
the License.

On Debian systems, the complete text of the Apache License, Version 2.0 can be
found in /usr/share/common-licenses/Apache-2.0.
";

const APACHE_LLVM: &str = "\
The Apache License, Version 2.0 (on Debian systems in
/usr/share/common-licenses/Apache-2.0), with these exceptions:

---- LLVM Exceptions to the Apache 2.0 License ----

As an exception, if, as a result of your compiling your source code, portions
of this Software are embedded into an Object form of such source code, you
may redistribute such embedded portions in such Object form without complying
with the conditions of Sections 4(a), 4(b) and 4(d) of the License.

In addition, if you combine or link compiled forms of this Software with
software that is licensed under the GPLv2 (\"Combined Software\") and if a
court of competent jurisdiction determines that the patent provision (Section
3), the indemnity provision (Section 9) or other Section of the License
conflicts with the conditions of the GPLv2, you may retroactively and
prospectively choose to deem waived or otherwise exclude such Section(s) of
the License, but only in their entirety and only with respect to the Combined
Software.
";

const ZLIB: &str = "\
This software is provided 'as-is', without any express or implied warranty.
In no event will the authors be held liable for any damages arising from the
use of this software.

Permission is granted to anyone to use this software for any purpose,
including commercial applications, and to alter it and redistribute it
freely, subject to the following restrictions:

1. The origin of this software must not be misrepresented; you must not claim
   that you wrote the original software. If you use this software in a
   product, an acknowledgment in the product documentation would be
   appreciated but is not required.

2. Altered source versions must be plainly marked as such, and must not be
   misrepresented as being the original software.

3. This notice may not be removed or altered from any source distribution.
";

const UNLICENSE: &str = "\
This is free and unencumbered software released into the public domain.

Anyone is free to copy, modify, publish, use, compile, sell, or distribute
this software, either in source code form or as a compiled binary, for any
purpose, commercial or non-commercial, and by any means.

In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the
public domain. We make this dedication for the benefit of the public at large
and to the detriment of our heirs and successors. We intend this dedication
to be an overt act of relinquishment in perpetuity of all present and future
rights to this software under copyright law.

THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.

For more information, please refer to <http://unlicense.org/>
";

const GPL_2: &str = "\
This program is free software; you can redistribute it and/or modify it under
the terms of the GNU General Public License version 2 as published by the Free
Software Foundation.

On Debian systems, the complete text of the GNU General Public License version 2
can be found in `/usr/share/common-licenses/GPL-2'.
";

const LGPL_2_1: &str = "\
This library is free software; you can redistribute it and/or modify it under
the terms of the GNU Lesser General Public License version 2.1 as published by
the Free Software Foundation.

On Debian systems, the complete text of the GNU Lesser General Public License
version 2.1 can be found in `/usr/share/common-licenses/LGPL-2.1'.
";

const ZERO_BSD: &str = "\
Permission to use, copy, modify, and/or distribute this software for any
purpose with or without fee is hereby granted.

THE SOFTWARE IS PROVIDED \"AS IS\" AND THE AUTHOR DISCLAIMS ALL WARRANTIES WITH
REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF MERCHANTABILITY
AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR ANY SPECIAL, DIRECT,
INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES WHATSOEVER RESULTING FROM
LOSS OF USE, DATA OR PROFITS, WHETHER IN AN ACTION OF CONTRACT, NEGLIGENCE OR
OTHER TORTIOUS ACTION, ARISING OUT OF OR IN CONNECTION WITH THE USE OR
PERFORMANCE OF THIS SOFTWARE.
";

/// The permission notice of the Wayland protocol XML files (cosmic-protocols' copies in
/// `crates/pawl-linux/protocols/`), SPDX `HPND-sell-variant`.
const HPND_SELL_VARIANT: &str = "\
Permission to use, copy, modify, distribute, and sell this
software and its documentation for any purpose is hereby granted
without fee, provided that the above copyright notice appear in
all copies and that both that copyright notice and this permission
notice appear in supporting documentation, and that the name of
the copyright holders not be used in advertising or publicity
pertaining to distribution of the software without specific,
written prior permission.  The copyright holders make no
representations about the suitability of this software for any
purpose.  It is provided \"as is\" without express or implied
warranty.

THE COPYRIGHT HOLDERS DISCLAIM ALL WARRANTIES WITH REGARD TO THIS
SOFTWARE, INCLUDING ALL IMPLIED WARRANTIES OF MERCHANTABILITY AND
FITNESS, IN NO EVENT SHALL THE COPYRIGHT HOLDERS BE LIABLE FOR ANY
SPECIAL, INDIRECT OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN
AN ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION,
ARISING OUT OF OR IN CONNECTION WITH THE USE OR PERFORMANCE OF
THIS SOFTWARE.
";
