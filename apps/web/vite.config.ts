import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** SANDCAST_API_URL: where `vite dev` forwards /api (default the server's default address). */
const api = process.env.SANDCAST_API_URL ?? 'http://127.0.0.1:7420';

export default defineConfig({
  plugins: [react(), tailwindcss()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1200 },
  server: { host: '127.0.0.1', proxy: { '/api': { target: api, ws: true } } },
});
