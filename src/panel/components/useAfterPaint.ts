import { useEffect, useState } from 'react';

/**
 * useAfterPaint is false until the first paint after the component mounts
 * (or after armed turns true), then true for good: what can wait renders in
 * the task after that paint (the canvas draws in the first animation frame).
 */
export function useAfterPaint(armed = true): boolean {
  const [painted, setPainted] = useState(false);
  useEffect(() => {
    if (painted || !armed) {
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => (timer = setTimeout(() => setPainted(true))));
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [painted, armed]);
  return painted;
}
