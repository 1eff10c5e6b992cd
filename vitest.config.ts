// JS unit tests of the explorer, in Debian's Chromium (never a downloaded browser).
import { playwright } from "@vitest/browser-playwright";
import { defineConfig } from "vitest/config";

export default defineConfig({
  define: { "define.amd": "false" },
  test: {
    include: ["js/tests/**/*.test.ts"],
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: false,
      provider: playwright({
        launchOptions: {
          executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
          args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
        },
      }),
      instances: [{ browser: "chromium" }],
    },
  },
});
