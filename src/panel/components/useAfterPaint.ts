import { useEffect, useState } from 'react';

/**
 * useAfterPaint is false until the first paint after the component mounts,
 * then true: what can wait renders in the task after that paint (the canvas
 * draws in the first animation frame).
 */
export function useAfterPaint(): boolean {
  const [painted, setPainted] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => (timer = setTimeout(() => setPainted(true))));
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, []);
  return painted;
}
