import { createRoot } from 'react-dom/client'

function App() {
  return <p>Pacer console — coming in the console issue.</p>
}

createRoot(document.getElementById('root')!).render(<App />)
