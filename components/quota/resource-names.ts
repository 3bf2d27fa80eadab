// The quota resource types in words live with the console's other shared wording (components/ui).
export { resourceName } from '@/components/ui/resource-names';
