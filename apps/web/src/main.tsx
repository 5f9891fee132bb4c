import './index.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, createQueryClient } from './App.tsx';
import { createBrowserClient } from './api/client.ts';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App client={createBrowserClient()} queryClient={createQueryClient()} />
  </StrictMode>,
);
