# Homebrew formula for pawl (macOS).
#
# UNTESTED: pawl's CI machine is Linux, without brew; no Mac has run this file. `url` and
# `sha256` are placeholders until a release tarball is published; `brew install --HEAD
# ./contrib/homebrew/pawl.rb` would build the checkout's repository instead.
class Pawl < Formula
  desc "Small, fast mouse daemon: gestures, back/forward, per-device scroll"
  homepage "https://example.invalid/pawl"
  url "https://example.invalid/pawl/pawl-0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  license any_of: ["MIT", "Apache-2.0"]
  head "https://example.invalid/pawl.git", branch: "main"

  depends_on "rust" => :build
  depends_on :macos

  def install
    system "cargo", "install", *std_cargo_args(path: "crates/pawl")
    man1.install Dir["contrib/man/*.1"]
    man5.install "contrib/man/pawl.5"
    bash_completion.install "contrib/completions/pawl.bash" => "pawl"
    zsh_completion.install "contrib/completions/_pawl"
    fish_completion.install "contrib/completions/pawl.fish"
  end

  # `brew services start pawl`: the same as the LaunchAgent `pawl service install` writes
  # (contrib/dev.pawl.worker.plist), with a log.
  service do
    run [opt_bin/"pawl", "run"]
    keep_alive successful_exit: false
    process_type :interactive
    log_path var/"log/pawl.log"
    error_log_path var/"log/pawl.log"
  end

  def caveats
    <<~EOS
      pawl needs the Accessibility permission: System Settings → Privacy & Security →
      Accessibility, add #{opt_bin}/pawl.
    EOS
  end

  test do
    assert_match "pawl #{version}", shell_output("#{bin}/pawl --version")
    (testpath/"config.toml").write shell_output("#{bin}/pawl config default")
    system bin/"pawl", "config", "check", testpath/"config.toml"
  end
end
